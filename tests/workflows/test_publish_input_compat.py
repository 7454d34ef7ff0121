"""Publish inputs scheduled by older workflows still decode for the current activity.

Older workflows sent ``page_keys``, ``text_sha256`` and ``page_sigs`` twice: flat
and inside ``ocr``/``check``. The saved histories hold such inputs as they were
scheduled; an activity still queued across the upgrade receives exactly those.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from custody.models import PublishInput

HISTORIES = Path(__file__).parent / "histories"


def _scheduled_publish_input(history: Path) -> dict[str, Any]:
    for event in json.loads(history.read_text())["events"]:
        attrs = event.get("activityTaskScheduledEventAttributes")
        if attrs and attrs["activityType"]["name"] == "custody.publish":
            data: dict[str, Any] = json.loads(
                base64.b64decode(attrs["input"]["payloads"][0]["data"])
            )
            return data
    raise AssertionError(f"{history.name} schedules no publish")


@pytest.mark.parametrize("name", ["published-v1", "published-v2", "published"])
def test_publish_input_old_payload_decodes_to_the_nested_values(name: str) -> None:
    """An old payload with the flat copies decodes; its keys and hash come from ocr/check."""
    old = _scheduled_publish_input(HISTORIES / f"{name}.json")
    assert "page_keys" in old and "text_sha256" in old  # the shape this test is about
    inp = PublishInput.model_validate_json(json.dumps(old))
    assert inp.ocr.page_keys == old["page_keys"]
    assert inp.check.text_sha256 == old["text_sha256"]
    assert inp.ocr.page_sigs == old.get("page_sigs", [])


def test_publish_input_carries_each_value_once_and_refuses_unknown_fields() -> None:
    """A new payload has no flat copies, and any other unknown field is still refused."""
    old = _scheduled_publish_input(HISTORIES / "published.json")
    dumped = PublishInput.model_validate(old).model_dump(mode="json")
    assert not {"page_keys", "text_sha256", "page_sigs"} & dumped.keys()
    with pytest.raises(ValidationError):
        PublishInput.model_validate({**dumped, "page_count": 1})
