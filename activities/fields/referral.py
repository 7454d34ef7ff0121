"""Referral fields: referral date, participant ID, consent, clinic, clinician, reason.

Every value is read beside its own label, never found by its shape alone: a
referral carries several dates (birth, fax, referral) and several numbers
(MRN, participant ID), and only the label says which is which. The shape
then checks the value (a date must parse, an identifier must hold digits).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from activities.fields.anchors import Anchor, Candidate, candidates, find_anchors
from activities.fields.choose import Reading, decide, ocr_confidence
from activities.fields.consent import read_consent
from activities.fields.labels import REFERRAL_LABELS
from activities.fields.layout import Line, Token, joined, near, stamps
from activities.fields.normalise import dates_in, identifier, plain_text
from activities.fields.wording import check, english
from custody.fields import FieldValueType, FoundField
from custody.models import PageText

#: Confidence a value needs to be published without review, per field.
BARS: dict[str, float] = {
    "referral_date": 0.85,
    "participant_id": 0.85,
    "consent": 0.9,
    "referring_clinic": 0.85,
    "clinician": 0.85,
    "reason": 0.85,
}
#: How sure OCR must be of a free-text word no dictionary knows (measured: names read
#: right are 0.95 or more on drawn referrals, degraded ones included).
WORD_BAR = 0.95
#: How much less sure free text is with a word that fails that check: below every bar.
IMPLAUSIBLE = 0.8
#: How much less sure a value is when a rubber stamp is printed beside it.
STAMPED = 0.8
#: A value within this many label heights right of its label is "close" to it.
CLOSE_GAP = 4.0
_ID = re.compile(r"^[A-Za-z]{0,4}[-#]?[A-Za-z0-9]*\d[A-Za-z0-9/-]*$")
_CLINIC_WORDS = ("clinic", "practice", "centre", "center", "medicine", "medical", "health")
Parser = Callable[[Sequence[Token]], tuple[FieldValueType, Sequence[Token], float] | None]


def read_referral(pages: Sequence[PageText], lines: Sequence[Line]) -> dict[str, FoundField]:
    anchors = find_anchors(lines, REFERRAL_LABELS)
    overprinted = stamps(list(lines))
    fields = {}
    for name, parser in (
        ("referral_date", _date),
        ("participant_id", _identifier),
        ("referring_clinic", _text),
        ("clinician", _text),
        ("reason", _text),
    ):
        readings, seen = _readings(name, parser, lines, anchors, overprinted)
        if name == "referring_clinic":
            readings = _with_heading(readings, _clinic_headings(lines))
        fields[name] = decide(name, readings, BARS[name], seen=seen or bool(readings))
    fields["consent"] = read_consent(pages, lines, anchors, BARS["consent"])
    return {name: fields[name] for name in BARS}


def _readings(
    name: str,
    parser: Parser,
    lines: Sequence[Line],
    anchors: Sequence[Anchor],
    overprinted: list[Token],
) -> tuple[list[Reading], bool]:
    """One reading per label of the field, and whether any label was seen."""
    own = [a for a in anchors if a.kind == name]
    readings = [_best(candidates(anchor, lines, anchors), parser) for anchor in own]
    return [_stamped(r, overprinted) for r in readings if r is not None], bool(own)


def _stamped(reading: Reading, overprinted: list[Token]) -> Reading:
    """A value beside a rubber stamp may have lost a letter to its ink while OCR stays sure."""
    if not near(reading.tokens, overprinted):
        return reading
    return Reading(reading.value, reading.tokens, STAMPED * reading.confidence, reading.method)


def _best(found: list[Candidate], parser: Parser) -> Reading | None:
    """The anchor's one reading: close right of it, else below it, else far right of it."""
    below = any(c.method == "anchor:below" for c in found)
    ranked = []
    for cand in found:
        parsed = parser(cand.tokens)
        if parsed is None:
            continue
        value, used, quality = parsed
        place = _place(cand)
        # Far right of a label with a value under it: a grid's next cell is as likely.
        geometry = 0.9 if place == 2 and below else 1.0
        sure = cand.anchor.score * geometry * quality * ocr_confidence(used)
        ranked.append((place, -sure, Reading(value, tuple(used), sure, cand.method)))
    return min(ranked, key=lambda r: r[:2])[2] if ranked else None


def _place(cand: Candidate) -> int:
    """0: close right of the label, 1: under it, 2: far right of it (a list's value column)."""
    if cand.method == "anchor:below":
        return 1
    return 0 if cand.gap <= CLOSE_GAP else 2


def _date(tokens: Sequence[Token]) -> tuple[FieldValueType, Sequence[Token], float] | None:
    hits = dates_in(joined(list(tokens)))
    if not hits:
        return None
    # Two dates after one label (a range, a DOB run on) leave it unsure which.
    quality = (0.8 if hits[0].repaired else 1.0) * (0.8 if len(hits) > 1 else 1.0)
    return hits[0].iso, tokens, quality


def _identifier(tokens: Sequence[Token]) -> tuple[FieldValueType, Sequence[Token], float] | None:
    used = [tokens[0]]
    for tok in tokens[1:]:
        # A hyphenated identifier OCR split in two ("PT-0421 -A"): rejoin the close pieces.
        if tok.x0 - used[-1].x1 > 0.35 * tok.height:
            break
        used.append(tok)
    value = identifier("".join(t.text for t in used))
    if not _ID.match(value) or sum(c.isdigit() for c in value) < 3 or dates_in(value):
        return None
    return value, used, 1.0


def _text(tokens: Sequence[Token]) -> tuple[FieldValueType, Sequence[Token], float] | None:
    """Free text, its words checked: OCR is often sure of a word it misread ("Persisient").

    A word no dictionary knows (a name, a misread) must be one OCR was very
    sure of, and a visible slip ("J1n", an accent) one a known word repairs;
    otherwise the value is made unsure enough to need review.
    """
    if sum(c.isalpha() for c in joined(list(tokens))) < 2 or tokens[-1].text.endswith(":"):
        return None  # empty, or the next label of a list rather than a value
    checked = check(tokens, english)
    plausible = not checked.doubt and checked.confidence >= WORD_BAR
    return plain_text(joined(list(checked.tokens))), tokens, 1.0 if plausible else IMPLAUSIBLE


def _with_heading(readings: list[Reading], headings: list[Reading]) -> list[Reading]:
    """A heading names the clinic when no label does, and backs a label that agrees.

    A labelled value OCR was unsure of, spelt as a heading spells it (two
    readings of separate print), is as sure as the surer of the two; a
    heading that disagrees is left out: it may be the receiving hospital's.
    """
    if not readings:
        return headings[:1] if len({_folded(h.value) for h in headings}) == 1 else []
    if len({_folded(r.value) for r in readings}) != 1:
        return readings
    agree = [h for h in headings if _folded(h.value) == _folded(readings[0].value)]
    if not agree:
        return readings
    best = max(readings, key=lambda r: r.confidence)
    sure = max(best.confidence, *(h.confidence for h in agree))
    return [Reading(best.value, best.tokens, sure, f"{best.method}+heading")]


def _folded(value: FieldValueType) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", str(value).lower()).split())


def _clinic_headings(lines: Sequence[Line]) -> list[Reading]:
    """Each page's heading (its first two lines) that reads as a clinic's name."""
    found = []
    for page in dict.fromkeys(line.page for line in lines):
        for line in [line for line in lines if line.page == page][:2]:
            value = plain_text(joined(line.tokens))
            named = any(w in value.lower() for w in _CLINIC_WORDS)
            if named and not any(c.isdigit() for c in value):
                sure = 0.9 * ocr_confidence(line.tokens)
                found.append(Reading(value, tuple(line.tokens), sure, "heading"))
    return found
