"""The redaction plan on words laid out as OCR gives them: labels, values, distractors.

Word boxes are written by hand here (no engine), in the layouts the synthetic
referrals use: a labelled line, a boxed grid with the value under its label,
and a letter that names the clinician twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.redact.plan import make_plan, normal
from activities.redact.policy import DEFAULT_REDACTION, load_redaction
from custody import egress as eg
from custody.errors import Code, EgressRefused
from custody.fields import Classification, DocType, Extraction, FoundField
from custody.models import PageText, Word

#: The detectors and fields alone, the allow-list sweeps off: what these tests are about
#: (``test_allow`` covers the sweeps the default policy adds).
DETECTORS_ONLY = DEFAULT_REDACTION.model_copy(update={"sweeps": ()})

H = 30  # a word's height in pixels


def _page(rows: list[list[tuple[int, int, str]]], page: int = 0) -> PageText:
    """Words from (x, y, text) rows, each 18 px per character wide."""
    words = [
        Word(
            text=t,
            confidence=0.99,
            box=[[x, y], [x + 18 * len(t), y], [x + 18 * len(t), y + H], [x, y + H]],
        )
        for row in rows
        for x, y, t in row
    ]
    text = " ".join(w.text for w in words)
    return PageText(
        page=page, width=1700, height=2200, text=text, words=words, mean_confidence=0.99, seconds=0
    )


def _kept_text(page: PageText) -> str:
    return normal(" ".join(w.text for w in page.words))


def test_redaction_plan_takes_values_beside_their_labels_only() -> None:
    """ID, MRN and DOB go by their labels; the referral date beside them stays."""
    page = _page(
        [
            [
                (100, 100, "Participant"),
                (320, 100, "ID:"),
                (700, 100, "P-00421"),
                (900, 100, "MRN:"),
                (1000, 100, "7400787"),
            ],
            [(100, 200, "DOB"), (700, 200, "12/03/1960")],
            [(100, 300, "Referral"), (270, 300, "Date:"), (700, 300, "14/03/2026")],
        ]
    )
    plan = make_plan([page], None, DETECTORS_ONLY)
    assert {r.source for r in plan.regions} >= {"participant_id", "mrn", "date_of_birth"}
    assert {"P-00421", "7400787", "12/03/1960"} <= plan.secrets
    kept = _kept_text(plan.kept[0])
    assert "p00421" not in kept and "7400787" not in kept and "12031960" not in kept
    assert "14032026" in kept and "referral" in kept


def test_redaction_plan_reads_a_grid_value_under_its_label() -> None:
    """In a boxed grid the value sits under its label, beside another cell's label."""
    page = _page(
        [
            [(135, 232, "Participant"), (350, 232, "No."), (875, 232, "Fax"), (950, 232, "date")],
            [(135, 290, "00001234"), (875, 290, "15/03/2026")],
        ]
    )
    plan = make_plan([page], None, DETECTORS_ONLY)
    assert plan.secrets == {"00001234"}
    assert "15032026" in _kept_text(plan.kept[0])


def test_redaction_plan_sweeps_every_occurrence_of_a_field_value() -> None:
    """A clinician read as a field goes where it was read and wherever else it is printed."""
    page = _page(
        [
            [
                (140, 860, "Copied"),
                (300, 860, "to"),
                (520, 860, "Amira"),
                (640, 860, "Haddad"),
            ],
            [
                (140, 920, "Referring"),
                (330, 920, "clinician:"),
                (560, 920, "Amira"),
                (680, 920, "Haddad"),
            ],
        ]
    )
    field = FoundField(
        name="clinician",
        status="found",
        value="Amira Haddad",
        page=0,
        box=[560, 920, 800, 950],
        confidence=0.95,
    )
    kind = Classification(type=DocType.REFERRAL, how="classified", confidence=0.9)
    plan = make_plan(
        [page], Extraction(classification=kind, fields={"clinician": field}), DETECTORS_ONLY
    )
    assert {"Amira Haddad", "Amira", "Haddad"} <= plan.secrets
    assert {(r.reason, r.source) for r in plan.regions} >= {
        ("field", "clinician"),
        ("sweep", "sweep"),
    }
    assert "haddad" not in _kept_text(plan.kept[0]) and "copied" in _kept_text(plan.kept[0])


def test_redaction_policy_loads_by_name_or_file(tmp_path: Path) -> None:
    """A built-in name or a JSON file; an unknown name and a malformed file are refused, coded."""
    assert load_redaction("default") is DEFAULT_REDACTION
    custom = tmp_path / "ids-only.json"
    custom.write_text(
        json.dumps({"name": "ids-only", "fields": [], "detectors": ["participant_id"]})
    )
    assert load_redaction(str(custom)).detectors == ("participant_id",)
    with pytest.raises(EgressRefused) as unknown:
        load_redaction("no-such-policy")
    assert unknown.value.code is Code.POLICY_UNKNOWN
    custom.write_text(json.dumps({"name": "x", "detectors": ["horoscope"]}))
    with pytest.raises(EgressRefused) as invalid:
        load_redaction(str(custom))
    assert invalid.value.code is Code.POLICY_INVALID


def test_release_policy_view_keeps_older_policies_hashes() -> None:
    """``view`` is left out of a policy's canonical form at its default, so pinned hashes hold."""
    assert b'"view"' not in eg.DEFAULT_POLICY.canonical()
    redacted = eg.Policy(name="default", view="redacted")
    assert b'"view":"redacted"' in redacted.canonical()
    assert redacted.sha256() != eg.DEFAULT_POLICY.sha256()
    with pytest.raises(ValueError, match="page_images"):
        eg.Policy(name="x", view="redacted", include=("page_images",))


def _slanted(x: int, y: int, text: str, slope: float) -> Word:
    """A word on a page turned a little: its box's top edge rises ``slope`` px per px."""
    w = 18 * len(text)
    top = [[x, y], [x + w, round(y + slope * w)]]
    return Word(
        text=text, confidence=0.99, box=[*top, [x + w, round(y + slope * w) + H], [x, y + H]]
    )


def test_redaction_plan_follows_the_slope_of_a_skewed_scan() -> None:
    """On a page turned 3 degrees a date of birth 600 px right of its label still goes."""
    slope = -0.055
    words = [
        _slanted(100, 400, "DOB:", slope),
        _slanted(700, round(400 + slope * 600), "1951-09-22", slope),
    ]
    words += [
        _slanted(100, 480, "Referred", slope),
        _slanted(700, round(480 + slope * 600), "2025-11-23", slope),
    ]
    page = PageText(
        page=0, width=1700, height=2200, text="", words=words, mean_confidence=0.99, seconds=0
    )
    plan = make_plan([page], None, DETECTORS_ONLY)
    assert plan.secrets == {"1951-09-22"}
    assert "20251123" in _kept_text(plan.kept[0])


def test_redaction_plan_ends_a_name_where_the_next_cell_begins() -> None:
    """A titled name beside another cell's value on the same line takes none of that value."""
    page = _page(
        [
            [
                (135, 469, "Dr."),
                (200, 469, "Lena"),
                (300, 469, "Fischer"),
                (875, 469, "Suspected"),
                (1060, 469, "apnoea"),
            ]
        ]
    )
    plan = make_plan([page], None, DETECTORS_ONLY)
    assert plan.secrets == {"Dr. Lena Fischer", "Lena", "Fischer"}
    assert "suspectedapnoea" in _kept_text(plan.kept[0])


def test_redaction_plan_sweeps_a_value_that_wraps_onto_the_next_line() -> None:
    """An ID printed again across a line break ("... P-" / "00421") goes in both pieces."""
    page = _page(
        [
            [(100, 100, "Participant"), (320, 100, "ID:"), (700, 100, "P-00421")],
            [(100, 400, "Please"), (250, 400, "quote"), (400, 400, "P-")],
            [(100, 450, "00421"), (250, 450, "when"), (400, 450, "replying")],
        ]
    )
    plan = make_plan([page], None, DETECTORS_ONLY)
    kept = _kept_text(plan.kept[0])
    assert "00421" not in kept and "pleasequote" in kept and "whenreplying" in kept
    assert {r.source for r in plan.regions} >= {"participant_id", "sweep"}
