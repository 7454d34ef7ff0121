"""The fourth referral generator: its truth printed on its page (what it shares with the
fifth, files, layout, consent, conventions and wiring: test_referrals_blind.py; that it
is deterministic: test_referrals.py, with the others)."""

from __future__ import annotations

from datetime import date

from starter.bench import referrals_d_values as values
from starter.bench.referrals_d import generate, printed_identifiers

_PEOPLE = {"patient_name", "clinician"}


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
