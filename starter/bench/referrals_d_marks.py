"""Consent on the fourth generator's forms: boxes whose statements affirm or deny.

``consent_marks`` draws whatever ``Consent.mode`` says: one ticked box whose
statement affirms or denies ("boxes"), both statements with the true one
ticked ("pair"), the consent question with two option boxes ("options"), a
sentence, or nothing ("absent"). An unticked statement is never the only
evidence: a single box is always ticked, so a careful reader has an answer.
"""

from __future__ import annotations

from starter.bench.referrals_d_page import Page
from starter.bench.referrals_d_values import Drawn


def consent_marks(page: Page, drawn: Drawn, columns: tuple[int, int], y: int, size: int) -> int:
    """Consent at ``y``: its label at ``columns[0]``, the marks from ``columns[1]``;
    the y below it."""
    consent, (left, right) = drawn.consent, columns
    gap = int(size * 1.9)
    if consent.mode == "absent":
        return y
    if consent.sentence:
        return page.wrap(left, y, page.width - left - 100, consent.sentence, size) + 10
    page.text(left, y, drawn.labels["consent"], size, "sans_bold")
    given = bool(consent.truth)
    affirm, deny = consent.statements
    widest = max(page.length(t, size) for t in (affirm, deny, " ".join(consent.options)))
    if right + size + 80 + widest > page.width - 60:  # no room beside: the marks go below
        left, right, y = left, left + 40, y + gap
    if consent.mode == "boxes":
        page.checkbox(right, y, size, True, consent.mark)
        page.text(right + size + 16, y, affirm if given else deny, size)
        return y + gap
    if consent.mode == "pair":
        for ticked, statement in ((given, affirm), (not given, deny)):
            page.checkbox(right, y, size, ticked, consent.mark)
            page.text(right + size + 16, y, statement, size)
            y += gap
        return y
    yes, no = consent.options
    page.checkbox(right, y, size, given, consent.mark)
    end = page.text(right + size + 14, y, yes, size)
    page.checkbox(end + 60, y, size, not given, consent.mark)
    page.text(end + 74 + size, y, no, size)
    return y + gap
