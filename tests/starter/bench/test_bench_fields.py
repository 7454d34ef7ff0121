"""``custody bench fields``: ground truth found, values compared in normal form, the JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from custody.fields import Classification, DocType, Extraction, FoundField
from custody.models import PageText
from custody.stores.local import LocalStore
from starter.bench.bands import EDGES
from starter.bench.fields import _report, before_bars, drawn_referrals, scans
from starter.bench.fields_bands import MIN_READINGS, proposed_bar
from starter.bench.fields_score import Tally, Truth, same, truth_for
from starter.bench.referrals import write_set

FIELD_KEYS = {
    "expected",
    "exact",
    "missing",
    "wrong",
    "wrong_confident",
    "in_review",
    "exact_share",
}


def _read(kind: DocType, **values: str | bool) -> Extraction:
    fields = {
        n: FoundField(name=n, status="found", value=v, confidence=0.9) for n, v in values.items()
    }
    return Extraction(
        classification=Classification(type=kind, how="classified", confidence=0.9), fields=fields
    )


def test_bench_fields_finds_sroie_and_referral_ground_truth(corpus: Path, tmp_path: Path) -> None:
    """SROIE key files and written referral sets are both ground truth; other scans are not."""
    found = dict(scans(corpus / "ocr_gt", None))
    receipts = [p for p, t in found.items() if t.type == "receipt"]
    assert receipts and all(p.stem.startswith("sroie_") for p in receipts)
    assert truth_for(corpus / "ocr_gt" / "tess_phototest.tif") is None
    written = write_set(tmp_path, 1, seed=5)
    truth = truth_for(written[0])
    assert truth is not None and truth.type == "referral" and "participant_id" in truth.fields


def test_bench_fields_compares_in_normal_form() -> None:
    """Dates, totals and identifiers compare in normal form; a different value does not."""
    assert same("date", "2018-01-25", "25/01/2018")
    assert same("total", "9.00", "9")
    assert same("participant_id", "p 00421", "P00421")
    assert same("company", "FUYI MINI MARKET.", "fuyi mini market")
    assert same("address", "LOT 485 TMN KERAMAT 54200", "LOT 485, TMN KERAMAT,  54200")
    assert not same("participant_id", "P00421", "P-00421")  # an identifier keeps its dash
    assert not same("participant_id", "P-00427", "P-00421")


def test_bench_fields_tally_counts_wrong_confident_only_outside_review() -> None:
    """A wrong value in band high is wrong_confident, in band review only wrong; JSON shape."""
    truth = Truth(
        "referral", {"participant_id": "P-00421", "consent": True, "referral_date": "2026-03-14"}
    )
    tallies = {"all": Tally(), "referral": Tally()}
    wrong = _read(DocType.REFERRAL, participant_id="P-00427", consent=True)
    for key in tallies:
        tallies[key].add(truth, wrong, "high", "published")
        tallies[key].add(truth, wrong, "review", "published")
        tallies[key].add(truth, None, None, "quarantined")
    report = _report(tallies, 3, 1.0)
    pid = report["fields"]["participant_id"]
    assert (pid["expected"], pid["wrong"], pid["wrong_confident"], pid["missing"]) == (3, 2, 1, 1)
    assert report["fields"]["consent"]["exact"] == 2
    assert report["fields"]["referral_date"]["missing"] == 3
    assert report["classification_accuracy"] == round(2 / 3, 4)
    assert set(pid) == FIELD_KEYS and set(report["by_type"]) == {"referral"}
    assert report["targets"]["wrong_confident_total"] == 1 and not report["targets"]["all_met"]


def test_bench_fields_a_value_published_where_the_truth_is_unknown_is_wrong() -> None:
    """A null truth (the page says nothing either way) is not expected; a consent published
    for it counts wrong, wrong_confident outside review and consent_wrong; none counts nothing."""
    truth = Truth("referral", {"consent": None, "participant_id": "P-00421"})
    tally = Tally()
    tally.add(truth, _read(DocType.REFERRAL, consent=True), "high", "published")
    tally.add(truth, _read(DocType.REFERRAL, consent=False), "review", "published")
    tally.add(truth, _read(DocType.REFERRAL, participant_id="P-00421"), "high", "published")
    tally.add(truth, _read(DocType.REFERRAL, consent=True), "high", "review")
    consent = tally.fields["consent"].figures()
    assert (consent["expected"], consent["wrong"], consent["wrong_confident"]) == (0, 2, 1)
    assert tally.consent_wrong == 2 and tally.fields["participant_id"].exact == 1


def _unbarred(**readings: tuple[str | bool, float]) -> dict[str, FoundField]:
    return {
        n: FoundField(name=n, status="found", value=v, confidence=c)
        for n, (v, c) in readings.items()
    }


def test_bench_fields_reports_wrong_by_band_consent_wrong_and_splits() -> None:
    """Readings before their bars fill the OCR bench's bands; consent published opposite counts."""
    truth = Truth("referral", {"consent": True, "participant_id": "P-1"}, "held_out")
    tune = Truth("referral", {"consent": True, "participant_id": "P-1"}, "tuning")
    tallies = {"all": Tally(), "split:held_out": Tally(), "split:tuning": Tally()}
    opposite = _read(DocType.REFERRAL, consent=False, participant_id="P-1")
    before = _unbarred(consent=(False, 0.95), participant_id=("P-7", 0.55))
    for key in ("all", "split:held_out"):
        tallies[key].add(truth, opposite, "high", "published", before)
    for key in ("all", "split:tuning"):
        tallies[key].add(tune, _read(DocType.REFERRAL, consent=True), "high", "published")
    report = _report(tallies, 2, 1.0)
    assert report["consent_wrong"] == 1 and report["splits"]["tuning"]["consent_wrong"] == 0
    bands = {row["band"]: row for row in report["fields"]["participant_id"]["wrong_by_band"]}
    assert [r["band"] for r in bands.values()] == [
        f"{lo:.1f}-{hi:.1f}" for lo, hi in zip(EDGES, EDGES[1:], strict=False)
    ]
    assert (bands["0.5-0.7"]["readings"], bands["0.5-0.7"]["wrong"]) == (1, 1)
    consent = report["splits"]["held_out"]["fields"]["consent"]
    assert consent["bar_held"] is False and consent["wrong_at_or_above_bar"] == 1
    held = report["targets"]["held_out"]
    assert held["consent_wrong"] == 1 and not held["met"]


def test_proposed_bar_opens_a_band_only_on_enough_readings_none_wrong() -> None:
    """The top band always counts; a lower one only with MIN_READINGS right readings, none wrong."""
    sure = [(0.95, True)] * 30
    assert proposed_bar(sure + [(0.85, True)] * 3) == 0.9  # three right readings prove little
    assert proposed_bar(sure + [(0.85, True)] * MIN_READINGS) == 0.8
    assert proposed_bar(sure + [(0.85, True)] * 40 + [(0.75, False)]) == 0.8
    assert proposed_bar([(0.95, False)]) == 1.0


def test_bench_fields_reads_a_stored_referral_again_before_its_bars(tmp_path: Path) -> None:
    """A referral's extraction, stored and read back (its type now a plain string), is read
    again unbarred from its stored pages; a receipt is not."""
    store = LocalStore(tmp_path)
    page = PageText(page=1, width=10, height=10, text="", words=[], mean_confidence=0, seconds=0)
    store.put("pages", json.dumps([page.model_dump(mode="json")]).encode())
    stored = {
        kind: Extraction.model_validate_json(_read(kind).model_dump_json())
        for kind in (DocType.REFERRAL, DocType.RECEIPT)
    }
    assert before_bars(store, stored[DocType.RECEIPT], "pages") is None
    again = before_bars(store, stored[DocType.REFERRAL], "pages")
    assert again is not None and "participant_id" in again and again["consent"].value is None


def test_bench_fields_reports_the_third_generator_as_its_own_split(tmp_path: Path) -> None:
    """Drawn referrals include the third generator's, scored as split held_out_c, whose
    issue #27 targets are reported beside the second's held-out ones."""
    drawn = drawn_referrals(tmp_path, 1, seed=3)
    assert [t.split for _, t in drawn].count("held_out_c") == 1
    tallies = {"all": Tally(), "split:held_out_c": Tally()}
    truth = Truth("referral", {"consent": False, "participant_id": "ENR-1"}, "held_out_c")
    for key in tallies:
        tallies[key].add(truth, _read(DocType.REFERRAL, consent=True), "high", "published")
    report = _report(tallies, 1, 1.0)
    assert report["splits"]["held_out_c"]["consent_wrong"] == 1
    held = report["targets"]["held_out_c"]
    assert held == {
        "exact_share": 0.0,
        "exact_share_at_least": 0.95,
        "wrong_confident": 1,
        "consent_wrong": 1,
        "met": False,
    }
    assert "held_out" not in report["targets"]
