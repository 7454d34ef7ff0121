"""Confidence bands and issue #14's targets, on small hand-made figures."""

from __future__ import annotations

from starter.bench import bands
from starter.bench.targets import calibration, targets


def test_bands_judge_claims_truth_words_once_in_reading_order() -> None:
    """A word is right while the truth still holds an unclaimed copy of it."""
    truth = "The cat sat on the mat."
    read = [
        ("the cat", 0.95),
        ("sat", 0.85),
        ("om", 0.4),
        ("The", 0.2),
        ("the", 0.92),
        ("mat.", 0.75),
    ]
    judged = bands.judge(read, truth)
    assert judged == [
        (0.95, True),
        (0.95, True),
        (0.85, True),
        (0.4, False),
        (0.2, True),
        (0.92, False),  # a third "the": the truth has two
        (0.75, True),
    ]
    assert bands.count(judged) == [[1, 0], [1, 1], [0, 0], [1, 0], [1, 0], [3, 1]]


def test_bands_edges_fall_in_the_upper_band_and_one_is_top() -> None:
    """A confidence on an edge belongs to the band it opens; 1.0 to the top band."""
    counts = bands.count([(0.3, True), (0.9, False), (1.0, True), (0.0, True)])
    assert counts == [[1, 0], [1, 0], [0, 0], [0, 0], [0, 0], [2, 1]]
    rows = bands.table(counts)
    assert rows[-1]["band"] == "0.9-1.0" and rows[-1]["wrong_share"] == 0.5
    assert rows[2]["wrong_share"] is None


def test_bands_propose_floor_and_review_from_wrong_shares() -> None:
    """Review: lowest edge with every band above at most 20 % wrong; floor: at most 50 %."""
    counts = [[40, 30], [40, 25], [40, 12], [40, 3], [40, 2], [100, 1]]
    proposed = bands.propose(counts)
    assert proposed["review"] == 0.7 and proposed["floor"] == 0.5
    # A band of too few words moves nothing: one wrong word alone at 0.8-0.9.
    sparse = [[40, 30], [40, 25], [40, 12], [40, 3], [1, 1], [100, 1]]
    assert bands.propose(sparse)["review"] == 0.7
    assert bands.propose([[0, 0]] * 5 + [[50, 40]])["floor"] is None


def test_bands_calibration_splits_documents_by_mean_confidence() -> None:
    """Custody's documents land below the floor, in review or high by their mean."""

    def row(mean: float, f1: float) -> dict[str, object]:
        figures = {"mean_confidence": mean, "word_f1": f1, "bands": [[0, 0]] * 5 + [[30, 1]]}
        return {"engines": {"custody": figures}}

    found = calibration([row(0.2, 0.1), row(0.6, 0.8), row(0.95, 0.97)], 0.3, 0.55)
    split = found["custody"]["documents_current"]
    assert [split[g]["documents"] for g in ("below_floor", "review", "high")] == [1, 0, 2]
    assert (
        found["custody"]["bands"][-1]["words"] == 90 and found["custody"]["current"]["floor"] == 0.3
    )


def test_targets_read_as_ratios_and_verdicts() -> None:
    """Each target states both figures, the ratio and met; a missing engine leaves met None."""

    def figs(f1: float, ppm: float, tokens: float = 0.96) -> dict[str, float]:
        return {"word_f1": f1, "token_f1": tokens, "pages_per_minute": ppm}

    totals = {"custody": figs(0.95, 30.0, 0.97), "rapidocr_default": figs(0.93, 15.0, 0.95)}
    classes = {
        "forms": {"custody": figs(0.9, 30), "rapidocr_default": figs(0.89, 15), "documents": 2},
        "skew": {"custody": figs(0.8, 30), "rapidocr_default": figs(0.81, 15), "documents": 1},
    }
    found = targets(totals, classes, 0.01)
    assert found["f1_vs_rapidocr_default"]["corpus"]["met"] is True
    assert found["f1_vs_rapidocr_default"]["classes"]["skew"]["met"] is False
    assert found["f1_vs_rapidocr_default"]["met"] is False
    assert found["pages_per_minute_vs_rapidocr_default"] == {
        "ratio": 2.0,
        "target": 1.5,
        "met": True,
    }
    assert found["f1_corpus_at_least"]["met"] is True and found["steady_overhead_share"]["met"]
    assert found["pages_per_minute_vs_easyocr_default"]["met"] is None and found["all_met"] is None
    # The floor on the token scale is shown beside bare RapidOCR's, and stays out of all_met.
    tokens = found["f1_corpus_at_least_by_tokens"]
    assert tokens == {"custody": 0.97, "rapidocr_default": 0.95, "target": 0.93, "met": True}
    floor_missed = targets(totals | {"custody": figs(0.90, 30.0, 0.92)}, {}, 0.01)
    assert floor_missed["f1_corpus_at_least_by_tokens"]["met"] is False
    assert floor_missed["f1_corpus_at_least"]["met"] is False
    everything = targets(totals | {"easyocr_default": figs(0.7, 2.0)}, {}, 0.01)
    assert everything["all_met"] is True
    by_words_only = totals | {"easyocr_default": figs(0.7, 2.0), "custody": figs(0.92, 30.0, 0.95)}
    assert targets(by_words_only, {}, 0.01)["f1_corpus_at_least_by_tokens"]["met"] is True
    assert targets(by_words_only, {}, 0.01)["all_met"] is False  # the word-scale floor decides
    # Custody's lanes pass, when the bench ran one, is its speed: 20 pages/min against 15.
    totals["custody"] = totals["custody"] | {"throughput": {"pages_per_minute": 20.0}}
    slower = targets(totals, classes, 0.01)["pages_per_minute_vs_rapidocr_default"]
    assert slower == {"ratio": 1.333, "target": 1.5, "met": False}
