"""The fifth referral generator: its truth printed on its page, and its crossed consent
statements (what it shares with the fourth, files, layout, consent, conventions and
wiring: test_referrals_blind.py; that it is deterministic: test_referrals.py, with the
others)."""

from __future__ import annotations

import random
from datetime import date, time

from starter.bench import referrals_e_values as values
from starter.bench.referrals_e import generate

_PATIENT = {"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}


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
            spoken = [*values.POOLS.consent_questions, *values.POOLS.labels["consent"]]
            spoken += [w for pair in values.POOLS.consent_statements for w in pair]
            spoken += [w for _, pool in values.POOLS.consent_sentences.values() for w in pool]
            assert not any(w.casefold() in said for w in spoken), index
        people = [v for k, v in ref.identifiers.items() if k in _PATIENT or "person" in k]
        surnames = [p.split()[-1] for p in people if not p[0].isdigit() and "/" not in p]
        assert len(set(surnames)) == len(surnames), index  # no shared surname
    assert absent >= 2


def test_referrals_e_crossed_statement_says_which_way() -> None:
    """Over 400 draws a crossed statement's truth is whether it affirms."""
    drawn = [values.draw_consent(random.Random(i), marks=i % 2 == 0) for i in range(400)]
    assert any(c.mode == "statement" for c in drawn)
    for affirm, deny in values.POOLS.consent_statements:
        assert all(c.truth is (c.question == affirm) for c in drawn if c.question in (affirm, deny))
