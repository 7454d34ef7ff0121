"""``custody bench redaction`` searches each view for the truth its plan was never told.

Synthetic referrals (``starter.bench.referrals``) with their ground truth; the
session's default OCR engine. One test swaps in a plan that skips the
participant ID, a fault injected on purpose: the view's own detectors, re-run
on the view, still paint it; with them swapped out too (a check that trusts
the plan), the bench reports the true value the view still holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

import activities.redact.core as core
from activities.engines.base import OcrEngine
from activities.redact.plan import Plan, make_plan
from activities.redact.policy import DEFAULT_REDACTION, RedactionPolicy
from custody.fields import Extraction
from custody.models import PageText
from custody.settings import Settings
from starter.bench.redaction import documents, figures
from starter.bench.redaction_truth import variants
from starter.bench.referrals import write_set


def _plan_missing_participant(
    pages: Sequence[PageText], extraction: Extraction | None, policy: RedactionPolicy
) -> Plan:
    """Stand-in plan (a fault injected on purpose): blind to the participant ID."""
    blind = policy.model_copy(
        update={
            "fields": tuple(f for f in policy.fields if f != "participant_id"),
            "detectors": tuple(d for d in policy.detectors if d != "participant_id"),
        }
    )
    return make_plan(pages, extraction, blind)


def test_redaction_truth_variants_cover_how_values_are_printed() -> None:
    """A date in each printed style, a name's words without its title, an ID in either case."""
    dates = variants("referral_date", "2026-03-14")
    assert {"2026-03-14", "14/03/2026", "14.03.2026", "March 14, 2026", "14-Mar-2026"} <= set(dates)
    names = variants("clinician", "Dr. Grace Okafor")
    assert {"Dr. Grace Okafor", "Grace", "Okafor"} <= set(names) and "Dr." not in names
    assert {"PT-0421-A", "pt-0421-a"} <= set(variants("participant_id", " PT-0421-A"))


@pytest.mark.slow
def test_redaction_bench_finds_the_field_a_plan_missed(
    tmp_path: Path, ocr_engine: OcrEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A blind plan is caught by the re-run detectors; blind detectors too: the bench reports
    the true value."""
    write_set(tmp_path, 1, seed=11)
    docs = documents(tmp_path, DEFAULT_REDACTION, None)
    settings = Settings()
    clean = figures(docs, DEFAULT_REDACTION, ocr_engine, settings)
    assert clean["fields_searched"] == 2 and clean["leaks"] == 0 and clean["target_met"]
    monkeypatch.setattr(core, "make_plan", _plan_missing_participant)
    caught = figures(docs, DEFAULT_REDACTION, ocr_engine, settings)
    assert caught["views"] == 1 and caught["leaks"] == 0  # the re-run detectors painted it
    monkeypatch.setattr(core, "scan", lambda *_: [])  # and a check that trusts the plan
    leaky = figures(docs, DEFAULT_REDACTION, ocr_engine, settings)
    assert leaky["views"] == 1  # its own check passed: the plan never knew the value
    [row] = leaky["per_document"]
    assert (
        "participant_id@ocr:p1" in row["leaks"] and "participant_id@text-layer:p1" in row["leaks"]
    )
    assert leaky["leaks"] == len(row["leaks"]) and not leaky["target_met"]
