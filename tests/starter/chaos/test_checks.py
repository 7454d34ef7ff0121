"""The chaos invariants' readers, on saved workflow histories (no stack needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starter.chaos import checks

HISTORIES = Path(__file__).resolve().parents[2] / "workflows" / "histories"


def _history(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HISTORIES / name).read_text())
    return data


def test_retry_codes_read_the_failure_a_retry_got_past() -> None:
    """The quarantined history retried OCR after OCR_ERROR; the published one retried nothing."""
    assert checks.retry_codes(_history("quarantined.json")) == ["OCR_ERROR"]
    assert checks.retry_codes(_history("published.json")) == []


def test_ocr_wait_is_time_to_ocr_start_and_none_without_ocr() -> None:
    """Queue wait: seconds before OCR started; a rejected document never waited for OCR."""
    waited = checks.ocr_wait_s(_history("published.json"))
    assert waited is not None and 0 <= waited < 60
    assert checks.ocr_wait_s(_history("rejected.json")) is None


def test_leaks_name_the_place_never_the_text() -> None:
    """A ground-truth line found in some output is reported by length, not by content."""
    truth = {"Patient reported mild symptoms"}
    found = checks.leaks("temporal /metrics", 'x{msg="Patient reported mild symptoms"} 1', truth)
    assert found == ["document text in temporal /metrics: line of 30 chars"]
    assert checks.leaks("logs", "nothing here", truth) == []
