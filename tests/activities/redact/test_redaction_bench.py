"""``custody bench redaction`` searches each view for the truth its plan was never told.

A synthetic referral and a born-digital page with their ground truth; the
session's default OCR engine for the views and Tesseract for the bench's own
pass. One test swaps in a plan blind to the participant ID and a check that
trusts the plan (faults injected on purpose) to show the bench reports the
true value the view still holds.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pytest

import activities.redact.core as core
from activities.engines.base import OcrEngine
from activities.engines.selection import build_checker
from activities.engines.tesseract import TesseractEngine
from activities.redact.check import Surfaces, find
from activities.redact.plan import Plan, make_plan
from activities.redact.policy import DEFAULT_REDACTION, RedactionPolicy
from custody.fields import Extraction
from custody.models import PageText
from custody.settings import Settings
from starter.bench import born_digital, redaction
from starter.bench.redaction import documents, figures
from starter.bench.redaction_truth import truth_leaks, variants
from starter.bench.referrals import write_set


def _plan_missing_participant(
    pages: Sequence[PageText], extraction: Extraction | None, policy: RedactionPolicy
) -> Plan:
    """Stand-in plan (a fault injected on purpose): blind to the participant ID, the
    allow-list sweeps off too (they would remove it)."""
    blind = policy.model_copy(
        update={
            "fields": tuple(f for f in policy.fields if f != "participant_id"),
            "detectors": tuple(d for d in policy.detectors if d != "participant_id"),
            "sweeps": (),
        }
    )
    return make_plan(pages, extraction, blind)


def test_redaction_truth_variants_cover_how_values_are_printed() -> None:
    """A date in each printed style, a name's words without its title, an ID in either case,
    an address's parts."""
    dates = variants("referral_date", "2026-03-14")
    assert {"2026-03-14", "14/03/2026", "14.03.2026", "March 14, 2026", "14-Mar-2026"} <= set(dates)
    names = variants("clinician", "Dr. Grace Okafor")
    assert {"Dr. Grace Okafor", "Grace", "Okafor"} <= set(names) and "Dr." not in names
    assert {"PT-0421-A", "pt-0421-a"} <= set(variants("participant_id", " PT-0421-A"))
    assert {"TAMAN SEJATI", "45600 BESTARI JAYA"} <= set(
        variants("address", "NO 43, TAMAN SEJATI, IJOK, 45600 BESTARI JAYA.")
    )


def _read_as(text: str) -> Surfaces:
    return Surfaces(b"%PDF-", ("",), (text,), (), "", "tesseract", "5")


def test_redaction_truth_counts_a_name_read_at_a_word_edge_not_inside_other_words() -> None:
    """Seed 5's one "leak": the view's OCR read "October GE iabetes", which joined holds
    "berg"; no name is readable there. A name glued to its label, or split by the OCR,
    still counts, as does the check's own (stricter) search."""
    wanted = {"clinician": variants("clinician", "Mr S. R. van der Berg")}
    assert truth_leaks(_read_as("RECEIVED 2 October GE iabetes Centre"), wanted) == []
    for read in ("CLINICIAN:Berg", "Mr S. Be rg", "van der Berg.", "seen by vanderBerg"):
        assert truth_leaks(_read_as(read), wanted) == ["clinician@ocr:p1"], read
    assert find(_read_as("2 October GE iabetes"), ["Berg"]) == ("ocr:p1",)


def test_redaction_bench_counts_views_refusals_and_leaks_per_set(
    tmp_path: Path, ocr_engine: OcrEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Clean views on both sets; a blind plan and a trusting check: the true ID is a leak."""
    sets = {
        "referrals": documents(write_set(tmp_path / "r", 1, seed=11)),
        "born_digital_dev": documents(born_digital.write_set(tmp_path / "b", 1, "dev")),
    }
    reader, settings = TesseractEngine(1), Settings()
    engines = (ocr_engine, build_checker(settings))
    clean = figures(sets, DEFAULT_REDACTION, engines, reader, settings)
    assert clean["overall"]["views"] == 2 and clean["overall"]["leaks"] == {}
    assert clean["target_met"] and set(clean["sets"]) == set(sets)
    assert 0 < clean["overall"]["kept_word_share"] < 1  # what redacting cost, as a share
    monkeypatch.setattr(core, "make_plan", _plan_missing_participant)
    monkeypatch.setattr(core, "scan", lambda *_: [])  # and a check that trusts the plan
    one = {"referrals": sets["referrals"]}
    leaky = figures(one, DEFAULT_REDACTION, engines, reader, settings)
    [row] = leaky["per_document"]
    assert row["state"] == "kept" and "participant_id@text-layer:p1" in row["leaks"]
    assert leaky["overall"]["leaks"]["participant_id"] == len(row["leaks"])
    assert not leaky["target_met"]


def test_redaction_bench_reader_is_tesseract_unless_easyocr_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--reader easyocr`` searches with EasyOCR, of neither of the check's families
    (a stand-in class records the call: loading torch here would cost the suite ~10 s;
    the engine itself is tested in tests/activities/engines)."""
    settings = Settings()
    assert isinstance(redaction._reader(argparse.Namespace(), settings), TesseractEngine)
    made: list[str] = []
    monkeypatch.setattr(
        "activities.engines.base.EasyOcrEngine", lambda *a, **k: made.append(k["device"])
    )
    redaction._reader(argparse.Namespace(reader="easyocr"), settings)
    assert made == [settings.ocr_device]
