"""What each blind referral generator (the fourth to seventh) is checked for alike: its
files valid, every string on its page, consent spread, its conventions its own, and
wired into both benches as its own split and set. What only one of them prints is
checked in its own test_referrals_d.py / _e.py / _f.py / _g.py; that they are deterministic,
in test_referrals.py with the others."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from starter.bench import (
    referrals,
    referrals_b_values,
    referrals_c_values,
    referrals_d,
    referrals_d_values,
    referrals_e,
    referrals_e_values,
    referrals_f,
    referrals_f_values,
    referrals_g,
    referrals_g_values,
)
from starter.bench.redaction_truth import truth_strings
from tests.starter.bench.blind import (
    assert_own_split,
    assert_own_wordings,
    assert_valid_set,
    drawn_set,
    pool,
)


@dataclass(frozen=True)
class Blind:
    """One blind generator and what its checks expect of it."""

    generator: ModuleType
    values: ModuleType
    #: The identifiers every file of its set carries apart from the truth.
    patient: frozenset[str]
    #: A family's values as drawn for the layout check: (rng, family, index).
    draw: Callable[[random.Random, str, int], Any]
    #: Consent drawn where the family allows marked answers (True) or not.
    consent: Callable[[random.Random, bool], Any]
    #: Consent modes drawn only where marked answers are allowed.
    marked: tuple[str, ...]
    #: How many consents are drawn, and the bounds of how many are absent.
    draws: int
    absent: tuple[int, int]
    #: The generators whose wordings, clinics and reasons it must not share.
    others: tuple[ModuleType, ...]
    #: The split whose targets are reported beside its own, and a participant ID of its shape.
    beside: str
    participant: str
    #: In its redaction set: the stem of a document with other people and numbers, what
    #: its truth carries, what the search looks for, and a person searched by surname too.
    stem: str
    fields: frozenset[str]
    searched: frozenset[str]
    person: str


_D = Blind(
    referrals_d,
    referrals_d_values,
    frozenset({"patient_name", "date_of_birth", "participant_id", "clinician"}),
    lambda rng, family, _: referrals_d_values.draw_values(
        rng, us=family == "us_intake", boxes=family != "gp_letter"
    ),
    lambda rng, marks: referrals_d_values.draw_consent(rng, boxes=marks),
    ("boxes", "pair", "options"),
    300,
    (10, 60),
    (referrals, referrals_b_values, referrals_c_values),
    "held_out_c",
    "UKB#123456",
    "0000",  # the GP letter
    frozenset({"other_person_1", "other_person_2", "other_person_3", "other_id_1"}),
    frozenset({"patient_name", "mrn", "other_person_3", "other_id_1"}),
    "other_person_3",
)
_E = Blind(
    referrals_e,
    referrals_e_values,
    frozenset({"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}),
    lambda rng, _, index: referrals_e_values.draw_values(rng, marks=index % 2 == 0),
    lambda rng, marks: referrals_e_values.draw_consent(rng, marks=marks),
    ("circled", "ticked", "statement"),
    400,
    (20, 90),
    (referrals, referrals_b_values, referrals_c_values, referrals_d_values),
    "held_out_d",
    "LUMA_1234",
    "0003",  # the spoken letter
    frozenset({"other_person_1", "other_person_2", "other_id_1", "address"}),
    frozenset({"patient_name", "mrn", "other_person_2", "other_id_1", "phone"}),
    "other_person_2",
)
_F = Blind(
    referrals_f,
    referrals_f_values,
    frozenset({"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}),
    lambda rng, family, _: referrals_f.drawn_for(family, rng),
    lambda rng, marks: referrals_f_values.draw_consent(rng, marks=marks),
    ("ticked", "yes_no"),
    400,
    (30, 80),
    (referrals, referrals_b_values, referrals_c_values, referrals_d_values, referrals_e_values),
    "held_out_e",
    "KST-0412-88",
    "0001",  # the GP letter
    frozenset({"other_person_1", "other_person_2", "other_person_3", "other_id_1", "address"}),
    frozenset({"patient_name", "mrn", "other_person_1", "other_id_1", "phone"}),
    "other_person_1",
)
_G = Blind(
    referrals_g,
    referrals_g_values,
    frozenset({"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}),
    lambda rng, family, _: referrals_g.drawn_for(family, rng),
    lambda rng, marks: referrals_g_values.draw_consent(rng, marks=marks),
    ("ticked", "ringed"),
    400,
    (35, 105),
    (
        referrals,
        referrals_b_values,
        referrals_c_values,
        referrals_d_values,
        referrals_e_values,
        referrals_f_values,
    ),
    "held_out_f",
    "QV/25/0418-K",
    "0000",  # the dotted-leader form
    frozenset({"other_person_1", "other_person_2", "other_id_1", "address"}),
    frozenset({"patient_name", "mrn", "other_person_1", "other_id_1", "phone"}),
    "other_person_1",
)
_BLIND = pytest.mark.parametrize(
    "blind", [_D, _E, _F, _G], ids=["referrals_d", "referrals_e", "referrals_f", "referrals_g"]
)


@_BLIND
def test_blind_referrals_write_valid_files_and_truth_for_every_family(
    tmp_path: Path, blind: Blind
) -> None:
    """Each file opens (a 200 dpi PNG page, or a two-page PDF) beside its truth in its own
    split (ISO date, consent a boolean where there is evidence, else null) and its
    identifiers apart."""
    paths = blind.generator.write_set(tmp_path, 12, seed=3)
    families = set(blind.generator.FAMILIES)
    assert_valid_set(paths, blind.generator.SPLIT, families, set(blind.patient))


@_BLIND
def test_blind_referrals_every_string_on_the_page_and_none_overlapping(blind: Blind) -> None:
    """Over 60 drawings of the families no printed string runs off its page or over
    another, so every value a truth names can be read."""
    families = blind.generator.FAMILIES
    for index in range(60):
        family = list(families)[index % len(families)]
        rng = random.Random(index)
        for page in families[family](blind.draw(rng, family, index), rng):
            for n, (x0, y0, x1, y1) in enumerate(page.boxes):
                assert x0 >= 20 and x1 <= page.width - 20 and y1 <= page.height - 20, family
                for a0, b0, a1, b1 in page.boxes[n + 1 :]:
                    assert not (x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1), (family, index)


@_BLIND
def test_blind_referrals_consent_given_refused_and_sometimes_absent(blind: Blind) -> None:
    """Consent is given and refused about as often, absent now and then (and then only),
    marked answers only where the family allows them, and each sentence's truth its kind's."""
    drawn = [blind.consent(random.Random(i), i % 2 == 0) for i in range(blind.draws)]
    given = sum(c.truth is True for c in drawn) / len(drawn)
    refused = sum(c.truth is False for c in drawn) / len(drawn)
    assert 0.3 <= given <= 0.6 and 0.3 <= refused <= 0.6
    assert blind.absent[0] <= sum(c.truth is None for c in drawn) <= blind.absent[1]
    assert all((c.mode == "absent") is (c.truth is None) for c in drawn)
    assert not any(c.mode in blind.marked for c in drawn[1::2])
    assert set(blind.marked) <= {c.mode for c in drawn}
    for kind, (truth, wordings) in pool(blind.values, "consent_sentences").items():
        assert all(c.truth is truth for c in drawn if c.mode == kind and c.sentence in wordings)


@_BLIND
def test_blind_referrals_wordings_and_sites_are_not_the_other_generators(blind: Blind) -> None:
    """No label wording, clinic or reason is shared with the generators before it."""
    assert_own_wordings(blind.values, blind.others)


@_BLIND
def test_bench_fields_reports_each_blind_generator_as_its_own_split(
    tmp_path: Path, blind: Blind
) -> None:
    """Drawn referrals include the generator's, scored as its own split, with issue #27's
    targets reported for it beside the split before it."""
    assert_own_split(tmp_path, blind.generator.SPLIT, blind.beside, blind.participant)


@_BLIND
def test_bench_redaction_draws_each_blind_set_with_every_identifier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blind: Blind
) -> None:
    """``--sets referrals_d`` (or ``_e``, ``_f``) draws only that set, each truth carrying the
    page's other people and numbers, which the bench's search then looks for as well
    (a person by surname too)."""
    drawn = drawn_set(tmp_path, monkeypatch, blind.generator.__name__.rsplit(".", 1)[-1])
    letter = next(t for p, t in drawn if blind.stem in p.name)
    assert set(letter.fields) >= blind.fields
    searched = truth_strings(letter)
    assert blind.searched <= set(searched)
    assert str(letter.fields[blind.person]).split()[-1] in searched[blind.person]
