"""The fourth referral generator: its files valid, its truth printed and complete, its
conventions its own, and wired into both benches as its own split and set (that it is
deterministic: test_referrals.py, with the others)."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from starter.bench import referrals, referrals_b_values, referrals_c_values
from starter.bench import referrals_d_values as values
from starter.bench.redaction_truth import truth_strings
from starter.bench.referrals_d import (
    FAMILIES,
    SPLIT,
    generate,
    printed_identifiers,
    write_set,
)
from tests.starter.bench.blind import assert_own_split, assert_valid_set, drawn_set

_FIELDS = {"referral_date", "participant_id", "consent", "referring_clinic", "clinician", "reason"}
_PATIENT = {"patient_name", "date_of_birth", "participant_id", "clinician"}
_PEOPLE = {"patient_name", "clinician"}


def test_referrals_d_writes_valid_files_and_truth_for_every_family(tmp_path: Path) -> None:
    """Each file opens (a PNG page, or a two-page PDF) beside its truth in split held_out_d
    (ISO date, consent a boolean where there is evidence, else null) and its identifiers apart."""
    assert_valid_set(write_set(tmp_path, 12, seed=3), SPLIT, set(FAMILIES), _PATIENT)


def test_referrals_d_every_string_on_the_page_and_none_overlapping() -> None:
    """Over 60 drawings of the families no printed string runs off its page or over
    another, so every value a truth names can be read."""
    for index in range(60):
        family = list(FAMILIES)[index % len(FAMILIES)]
        rng = random.Random(index)
        drawn = values.draw_values(rng, us=family == "us_intake", boxes=family != "gp_letter")
        for page in FAMILIES[family](drawn, rng):
            for n, (x0, y0, x1, y1) in enumerate(page.boxes):
                assert x0 >= 20 and x1 <= page.width - 20 and y1 <= page.height - 20, family
                for a0, b0, a1, b1 in page.boxes[n + 1 :]:
                    assert not (x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1), (family, index)


def test_referrals_d_truth_is_what_the_page_prints() -> None:
    """Every truth value but the normalised date and consent is printed on its page, the
    date as printed goes back to the truth in its own style, and no two people on a page
    share a surname."""
    for index in range(24):
        ref = generate(index, 9)
        said = ref.printed.casefold()
        for name in ("participant_id", "clinician", "referring_clinic", "reason"):
            assert str(ref.truth[name]).casefold() in said, (index, name)
        style = ref.meta["date_style"]
        show = {**values.DATES, **values.US_DATES}[style]
        assert show(date.fromisoformat(str(ref.truth["referral_date"]))).casefold() in said
        for name, value in ref.identifiers.items():
            assert printed_identifiers({name: value}, ref.printed), (index, name)
        people = [v for k, v in ref.identifiers.items() if k in _PEOPLE or "person" in k]
        assert len({p.split()[-1] for p in people}) == len(people), index  # no shared surname


def test_referrals_d_consent_given_refused_and_sometimes_absent() -> None:
    """Over 300 draws consent is given and refused about as often, absent now and then,
    and shown as boxes only where the family allows them."""
    drawn = [values.draw_consent(random.Random(i), boxes=i % 2 == 0) for i in range(300)]
    given = sum(c.truth is True for c in drawn)
    refused = sum(c.truth is False for c in drawn)
    absent = sum(c.truth is None for c in drawn)
    assert 0.3 <= given / 300 <= 0.6 and 0.3 <= refused / 300 <= 0.6 and 10 <= absent <= 60
    assert not any(c.mode in ("boxes", "pair", "options") for c in drawn[1::2])
    for kind, (truth, wordings) in values.CONSENT_SENTENCES.items():
        assert all(c.truth is truth for c in drawn if c.mode == kind and c.sentence in wordings)


def test_referrals_d_wordings_and_sites_are_not_the_other_generators() -> None:
    """No label wording, clinic or reason is shared with the other three generators."""
    theirs = {w.casefold() for pool in referrals.LABELS.values() for w in pool}
    for pools in (
        referrals_b_values.LABELS,
        referrals_b_values.LABELS_RESERVED,
        referrals_b_values.LABELS_HELD,
        referrals_c_values.LABELS,
    ):
        theirs |= {w.casefold() for pool in pools.values() for w in pool}
    mine = {w.casefold() for pool in values.LABELS.values() for w in pool}
    assert not mine & theirs, mine & theirs
    for pool in ("CLINICS", "REASONS"):
        other = {
            v for module in (referrals, referrals_b_values, referrals_c_values)
            for v in getattr(module, pool)
        }  # fmt: skip
        assert not set(getattr(values, pool)) & other, pool


def test_bench_fields_reports_the_fourth_generator_as_its_own_split(tmp_path: Path) -> None:
    """Drawn referrals include the fourth generator's, scored as split held_out_d, with
    issue #27's targets reported for it beside the third's."""
    assert_own_split(tmp_path, SPLIT, "held_out_c", "UKB#123456")


def test_bench_redaction_draws_the_fourth_set_with_every_identifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--sets referrals_d`` draws only that set, each truth carrying the page's other
    people and numbers, which the bench's search then looks for as well."""
    drawn = drawn_set(tmp_path, monkeypatch, "referrals_d")
    letter = next(t for p, t in drawn if "0000" in p.name)  # the GP letter
    others = {"other_person_1", "other_person_2", "other_person_3", "other_id_1"}
    assert set(letter.fields) >= others
    searched = truth_strings(letter)
    assert {"patient_name", "mrn", "other_person_3", "other_id_1"} <= set(searched)
    assert str(letter.fields["other_person_3"]).split()[-1] in searched["other_person_3"]
