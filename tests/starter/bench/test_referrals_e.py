"""The fifth referral generator: deterministic, its files valid, its truth printed and
complete, its conventions its own, and wired into both benches as its own split and set."""

from __future__ import annotations

import hashlib
import random
from datetime import date, time
from pathlib import Path

import pytest

from starter.bench import (
    referrals,
    referrals_b_values,
    referrals_c_values,
    referrals_d_values,
)
from starter.bench import referrals_e_values as values
from starter.bench.redaction_truth import truth_strings
from starter.bench.referrals_e import (
    FAMILIES,
    SPLIT,
    ReferralE,
    generate,
    write_set,
)
from tests.starter.bench.blind import assert_own_split, assert_valid_set, drawn_set

_FIELDS = {"referral_date", "participant_id", "consent", "referring_clinic", "clinician", "reason"}
_PATIENT = {"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}


def _digest(ref: ReferralE) -> str:
    return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()


def test_referrals_e_same_seed_same_pixels() -> None:
    """A referral is drawn from its (seed, index) alone; another seed draws another one."""
    first, again, other = generate(4, 7), generate(4, 7), generate(4, 8)
    assert _digest(first) == _digest(again) != _digest(other)
    assert first.truth == again.truth and first.identifiers == again.identifiers


def test_referrals_e_writes_valid_files_and_truth_for_every_family(tmp_path: Path) -> None:
    """Each file opens (a 200 dpi PNG, or a two-page PDF) beside its truth in split
    held_out_e (ISO date, consent a boolean where there is evidence, else null) and
    its identifiers apart."""
    assert_valid_set(write_set(tmp_path, 12, seed=3), SPLIT, set(FAMILIES), _PATIENT)


def test_referrals_e_every_string_on_the_page_and_none_overlapping() -> None:
    """Over 60 drawings of the families no printed string runs off its page or over
    another, so every value a truth names can be read."""
    for index in range(60):
        family = list(FAMILIES)[index % len(FAMILIES)]
        rng = random.Random(index)
        drawn = values.draw_values(rng, marks=index % 2 == 0)
        for sheet in FAMILIES[family](drawn, rng):
            for n, (x0, y0, x1, y1) in enumerate(sheet.boxes):
                assert x0 >= 20 and x1 <= sheet.width - 20 and y1 <= sheet.height - 20, family
                for a0, b0, a1, b1 in sheet.boxes[n + 1 :]:
                    assert not (x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1), (family, index)


def _written(shown: str, day: date, style: str) -> bool:
    """``shown`` is ``day`` in ``style`` at some time of day."""
    show = values.DATES[style]
    return any(show(day, time(h, m)) == shown for h in range(24) for m in range(60))


def test_referrals_e_truth_is_what_the_page_prints() -> None:
    """Every truth value but the normalised date and consent is printed on its page; the
    referral date as printed (in its style, or one digit per box) is the truth's; a page
    whose consent is absent says nothing of it."""
    absent = 0
    for index in range(36):
        ref = generate(index, 9)
        said = ref.printed.casefold()
        for name in ("participant_id", "clinician", "referring_clinic", "reason"):
            assert str(ref.truth[name]).casefold() in said, (index, name)
        day = date.fromisoformat(str(ref.truth["referral_date"]))
        if ref.meta["layout"] == "comb_form":
            assert f"{day:%d %m %Y}" in ref.printed, index
        else:
            assert ref.shown["referral_date"] in ref.printed, index
            assert _written(ref.shown["referral_date"], day, ref.meta["date_style"]), index
        if ref.meta["consent_as"] == "absent":  # nothing on the page speaks of it
            absent += 1
            spoken = [*values.CONSENT_QUESTIONS, *values.LABELS["consent"]]
            spoken += [w for pair in values.CONSENT_STATEMENTS for w in pair]
            spoken += [w for _, pool in values.CONSENT_SENTENCES.values() for w in pool]
            assert not any(w.casefold() in said for w in spoken), index
        people = [v for k, v in ref.identifiers.items() if k in _PATIENT or "person" in k]
        surnames = [p.split()[-1] for p in people if not p[0].isdigit() and "/" not in p]
        assert len(set(surnames)) == len(surnames), index  # no shared surname
    assert absent >= 2


def test_referrals_e_consent_given_refused_and_sometimes_absent() -> None:
    """Over 400 draws consent is given and refused about as often, absent now and then,
    marked answers only where the family allows them, and each sentence's truth its kind's."""
    drawn = [values.draw_consent(random.Random(i), marks=i % 2 == 0) for i in range(400)]
    given = sum(c.truth is True for c in drawn)
    refused = sum(c.truth is False for c in drawn)
    absent = sum(c.truth is None for c in drawn)
    assert 0.3 <= given / 400 <= 0.6 and 0.3 <= refused / 400 <= 0.6 and 20 <= absent <= 90
    assert not any(c.mode in ("circled", "ticked", "statement") for c in drawn[1::2])
    for affirm, deny in values.CONSENT_STATEMENTS:  # the statement crossed says which way
        assert all(c.truth is (c.question == affirm) for c in drawn if c.question in (affirm, deny))
    assert {"circled", "ticked", "statement"} <= {c.mode for c in drawn}
    for kind, (truth, wordings) in values.CONSENT_SENTENCES.items():
        assert all(c.truth is truth for c in drawn if c.mode == kind and c.sentence in wordings)
    assert all(c.mode == "absent" for c in drawn if c.truth is None)


def test_referrals_e_wordings_and_sites_are_not_the_other_generators() -> None:
    """No label wording, clinic or reason is shared with the other four generators."""
    theirs = {w.casefold() for pool in referrals.LABELS.values() for w in pool}
    for pools in (
        referrals_b_values.LABELS,
        referrals_b_values.LABELS_RESERVED,
        referrals_b_values.LABELS_HELD,
        referrals_c_values.LABELS,
        referrals_d_values.LABELS,
    ):
        theirs |= {w.casefold() for pool in pools.values() for w in pool}
    mine = {w.casefold() for pool in values.LABELS.values() for w in pool}
    assert not mine & theirs, mine & theirs
    modules = (referrals, referrals_b_values, referrals_c_values, referrals_d_values)
    for pool in ("CLINICS", "REASONS"):
        other = {v.casefold() for module in modules for v in getattr(module, pool)}
        assert not {v.casefold() for v in getattr(values, pool)} & other, pool


def test_bench_fields_reports_the_fifth_generator_as_its_own_split(tmp_path: Path) -> None:
    """Drawn referrals include the fifth generator's, scored as split held_out_e, with
    issue #27's targets reported for it beside the other blind splits'."""
    assert_own_split(tmp_path, SPLIT, "held_out_d", "LUMA_1234")


def test_bench_redaction_draws_the_fifth_set_with_every_identifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--sets referrals_e`` draws only that set, each truth carrying the page's other
    people and numbers, which the bench's search then looks for as well."""
    drawn = drawn_set(tmp_path, monkeypatch, "referrals_e")
    letter = next(t for p, t in drawn if "0003" in p.name)  # the spoken letter
    assert set(letter.fields) >= {"other_person_1", "other_person_2", "other_id_1", "address"}
    searched = truth_strings(letter)
    assert {"patient_name", "mrn", "other_person_2", "other_id_1", "phone"} <= set(searched)
