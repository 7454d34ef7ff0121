"""The sixth referral generator: its truth printed on its page, its distractors, and its
ticked statements (what it shares with the fourth and fifth, files, layout, consent,
conventions and wiring: test_referrals_blind.py; that it is deterministic:
test_referrals.py, with the others)."""

from __future__ import annotations

import random
import re
from datetime import date

from starter.bench import referrals_f_values as values
from starter.bench.referral_files import AS_PRINTED
from starter.bench.referrals_f import FAMILIES, ReferralF, drawn_for, generate
from starter.bench.referrals_f_draw import FAMILY

_PATIENT = {"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}


def _spoken() -> list[str]:
    """Every wording that speaks of consent (a sentence's longest run between its
    blanks), the Yes/No labels aside."""
    pools = [pool for _, pool in values.CONSENT_SENTENCES.values()]
    words = [max(re.split(r"\{\w+\}", w), key=len).strip() for pool in pools for w in pool]
    return words + [w for pair in values.CONSENT_STATEMENTS for w in pair]


def _unprinted(ref: ReferralF) -> list[str]:
    """The truth values ``ref``'s pages do not print (the date in its drawn style)."""
    day = date.fromisoformat(str(ref.truth["referral_date"]))
    wanted = {name: str(ref.truth[name]) for name in AS_PRINTED}
    wanted["referral_date"] = values.DATES[ref.meta["date_style"]](day)
    return [
        name for name, value in wanted.items() if value.casefold() not in ref.printed.casefold()
    ]


def test_referrals_f_truth_is_what_the_page_prints() -> None:
    """Every truth value but consent is printed on its page (the date in its style, as
    drawn); a page whose consent is absent speaks of it only as empty Yes/No boxes; the
    patient's identifiers are all found; no two people share a surname."""
    refs = [generate(index, 9) for index in range(40)]
    spoken = [w.casefold() for w in _spoken()]
    for ref in refs:
        assert not _unprinted(ref), (ref.stem, _unprinted(ref))
        assert set(ref.identifiers) >= _PATIENT, ref.stem
        people = [ref.shown[k] for k in ("patient_name", "clinician_name", "other_person_1")]
        assert len({p.split()[-1] for p in people}) == len(people), ref.stem
    absent = [ref for ref in refs if ref.meta["consent_as"] == "absent"]
    assert len(absent) >= 2
    assert not [r.stem for r in absent if any(w in r.printed.casefold() for w in spoken)]


def test_referrals_f_pages_carry_distractor_dates_and_numbers() -> None:
    """The card prints its own printed date, a birth date and an appointment beside the
    referral date; each fax page carries the header line with its own stamp and both fax
    numbers; the US printout writes its dates month first or spelt out."""
    for index in range(20):
        ref = generate(index, 4)
        family, s = ref.meta["layout"], ref.shown
        if family == "request_card":
            others = (s["printed"], s["date_of_birth"], s["appointment"])
            assert all(d in ref.printed for d in others), index
        if family == "fax_referral":
            assert ref.printed.count("P.001/002") == ref.printed.count("P.002/002") == 1
            assert ref.printed.count(s["fax_stamp"]) == 2 and s["unit_fax"] in ref.printed
        if family == "e_referral":
            assert ref.meta["date_style"] in values.US_STYLES and ref.meta["region"] == "us"


def test_referrals_f_marks_stand_for_what_they_say() -> None:
    """Over 400 draws a ticked statement's truth is whether it affirms, a lone one is the
    ticked one, and a sentence's truth its kind's; empty boxes only where boxes are drawn."""
    drawn = [values.draw_consent(random.Random(i), marks=i % 2 == 0) for i in range(400)]
    for affirm, deny in values.CONSENT_STATEMENTS:
        ticked = [c for c in drawn if c.sentence in (affirm, deny)]
        assert ticked and all(c.truth is (c.sentence == affirm) for c in ticked)
        assert all(c.sentence in c.statements for c in ticked)
    assert any(c.blank for c in drawn) and not any(c.blank for c in drawn[1::2])


def test_referrals_f_every_family_writes_its_values_its_own_way() -> None:
    """The handwritten form is drawn in a pen's hand; the others print; each family's
    region is as its table says."""
    for family in FAMILIES:
        rng = random.Random(family)
        drawn = drawn_for(family, rng)
        page = FAMILIES[family](drawn, rng)[0]
        assert (page.hand is not None) is (family == "handwritten_form"), family
        region = FAMILY[family][0]
        assert region == "either" or drawn.shown["region"] == region, family
