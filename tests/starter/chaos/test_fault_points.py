"""The documented fault points the chaos harness relies on, without a stack.

The activity here is a stand-in that only counts its calls: what is under test
is ``coded``'s entry point ``<step>.start`` and the ``raise@<sha256>`` target.
"""

from __future__ import annotations

import dataclasses

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.faults import coded
from custody.errors import Code

POISON = "ab" * 32
OTHER = "cd" * 32


def _env(sha256: str, activity_type: str = "custody.ocr") -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info, workflow_id=f"doc-t1-{sha256}", activity_type=activity_type, attempt=2
    )
    return env


calls: list[str] = []


@coded(Code.OCR_ERROR)
def recognise(sha256: str) -> str:
    calls.append(sha256)
    return "ok"


def test_targeted_raise_fails_only_the_chosen_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ocr.start=raise@<prefix>``: that document's OCR fails with its transient code."""
    monkeypatch.setenv("CUSTODY_FAULTS", f"ocr.start=raise@{POISON[:16]}")
    calls.clear()
    with pytest.raises(ApplicationError) as err:
        _env(POISON).run(recognise, POISON)
    assert err.value.type == "OCR_ERROR" and not err.value.non_retryable
    assert err.value.details[0] == {"attempt": 2, "code": "OCR_ERROR"}
    assert POISON[:16] not in str(err.value)  # the message names the point, not the document
    assert _env(OTHER).run(recognise, OTHER) == "ok"
    assert calls == [OTHER]  # the poisoned attempt never reached the engine


def test_entry_point_is_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ocr.start`` does not fire in another step, and nothing fires when unset."""
    monkeypatch.setenv("CUSTODY_FAULTS", "ocr.start=raise")
    assert _env(POISON, "custody.publish").run(recognise, POISON) == "ok"
    with pytest.raises(ApplicationError):
        _env(OTHER).run(recognise, OTHER)
    monkeypatch.delenv("CUSTODY_FAULTS")
    assert _env(POISON).run(recognise, POISON) == "ok"
