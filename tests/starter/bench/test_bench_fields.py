"""``custody bench fields``: ground truth found, values compared in normal form, the JSON shape."""

from __future__ import annotations

from pathlib import Path

from custody.fields import Classification, DocType, Extraction, FoundField
from starter.bench.fields import _report, scans
from starter.bench.fields_score import Tally, Truth, same, truth_for
from starter.bench.referrals import write_set

FIELD_KEYS = {"expected", "exact", "missing", "wrong", "wrong_confident", "exact_share"}


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
