"""Referral fields: referral date, participant ID, consent, clinic, clinician, reason.

Every value is read beside its own label, never found by its shape alone: a
referral carries several dates (birth, fax, appointment, referral) and several
numbers (NHS number, MRN, participant ID), and only the label says which is
which. The shape then checks the value (a date must parse, an identifier must
hold digits, a clinician must read as a name). Where no label gives a field,
a letter may still say it where letters do (``letter``: its date line, its
signature, a sentence's "regarding ..."), read less surely. Each reading's
confidence is the product of where it was found, how well the label and the
value fit and how sure OCR was of the weakest word; ``BARS`` is where each
field's readings have been right, measured (``custody bench fields``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from activities.fields import letter, sentences, values
from activities.fields.anchors import Anchor, Candidate, candidates, find_anchors
from activities.fields.choose import Reading, decide
from activities.fields.concepts import reason_anchors
from activities.fields.consent import read_consent
from activities.fields.labels import REFERRAL_LABELS
from activities.fields.layout import Line, Token, joined, near, stamps
from activities.fields.normalise import (
    day_first,
    day_month_swappable,
    edit_distance,
    month_first,
    month_first_note,
    plain_text,
)
from activities.fields.rivals import Rival, claimed, contested, rivals, unexplained
from activities.fields.rivals import key as rival_key
from activities.fields.values import Parser
from custody.fields import FieldValueType, FoundField
from custody.models import PageText

#: Confidence a value needs to be published without review, per field: the bar each
#: field's wrong share per confidence band proposed on the tuning split
#: (``starter.bench.fields_bands``: the lowest band edge from which no band holds a
#: wrong reading, a lower band opened only on 20 readings or more). Measured on the
#: first generator's 100 referrals and the second's 100 tuning ones, seed 0
#: (docs/ocr-benchmark.md, "Fields (issue #27)").
BARS: dict[str, float] = {
    "referral_date": 0.9,
    "participant_id": 0.9,
    "consent": 0.9,
    "referring_clinic": 0.9,
    "clinician": 0.9,
    "reason": 0.9,
}
#: How sure a value is by where it sits from its label: close right of it, under it
#: (a grid), far right (a list's value column), or starting the next line (prose).
PLACES = {"right": 0.97, "below": 0.95, "far": 0.93, "wrapped": 0.9}
#: How sure a page's heading is as the clinic's name, its words checked: below the
#: clinic's bar, since one heading OCR misread in 51 was wrong on the tuning split and
#: nothing else on the page checked it; a label that agrees makes it sure.
HEADING = 0.88
#: A date labelled only "Date:" is the referral's less surely than one labelled so.
PLAIN_DATE = 0.95
#: How much less sure a value is when a rubber stamp is printed beside it.
STAMPED = 0.8
#: A value within this many label heights right of its label is "close" to it.
CLOSE_GAP = 4.0
_CLINIC_WORDS = frozenset(
    ("clinic", "practice", "centre", "center", "medicine", "medical", "health", "surgery")
)
#: Words of a document's title, never of a clinic's name ("Outpatient Referral - Research Clinic").
_TITLE_WORDS = frozenset(("referral", "form", "letter", "request", "summary", "fax", "memo"))
PARSERS: dict[str, Parser] = {
    "referral_date": values.date,
    "participant_id": values.identifier_value,
    "referring_clinic": values.place,
    "clinician": values.person,
    "reason": values.reason,
}


def read_referral(
    pages: Sequence[PageText], lines: Sequence[Line], bars: Mapping[str, float] = BARS
) -> dict[str, FoundField]:
    """The six fields; ``bars`` other than ``BARS`` only to measure readings below them."""
    anchors = find_anchors(lines, REFERRAL_LABELS)
    if not any(a.kind == "reason" for a in anchors):
        anchors = sorted(
            [*anchors, *reason_anchors(lines, anchors)], key=lambda a: (a.line, a.start)
        )
    overprinted = stamps(list(lines))
    fields = {}
    for name, parser in PARSERS.items():
        readings, seen = _readings(name, parser, lines, anchors, overprinted)
        readings += sentences.readings(name, lines)
        if not readings:
            readings = _unlabelled(name, lines, anchors, overprinted)
        if name == "referring_clinic":
            readings = _with_heading(readings, _clinic_headings(lines))
        if name == "referral_date":
            readings = _day_or_month(readings, lines)
        fields[name] = decide(name, readings, bars[name], seen=seen or bool(readings))
    fields["consent"] = read_consent(pages, lines, anchors, bars["consent"])
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
    field = "referral_date" if name == "plain_date" else name
    taken = claimed(field, lines, anchors)
    found = unexplained(rivals(field, lines), taken)
    readings = [_best(candidates(anchor, lines, anchors), parser, found, taken) for anchor in own]
    return [_stamped(r, overprinted) for r in readings if r is not None], bool(own)


def _unlabelled(
    name: str, lines: Sequence[Line], anchors: Sequence[Anchor], overprinted: list[Token]
) -> list[Reading]:
    """Where no label names the field: "Date:" for the date, then where letters say it."""
    if name == "referral_date":
        plain = _readings("plain_date", values.date, lines, anchors, overprinted)[0]
        found = [_weaker(r, PLAIN_DATE) for r in plain] or _letter_date(lines, anchors)
    elif name == "clinician":
        found = letter.senders(lines, anchors, name) or _signed_letter(lines, anchors)
    elif name == "reason":
        found = letter.reasons(lines)
    else:
        found = letter.senders(lines, anchors, name)
    return [_stamped(r, overprinted) for r in found]


def _letter_date(lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Reading]:
    """A letter's date line, singled out by the letter (``_the_letters_own``): a birth date
    beside "DOB" is explained; "I saw him on 15th December" is not, and then which date is
    the referral's goes to review."""
    taken = claimed("referral_date", lines, anchors)
    return _the_letters_own("referral_date", letter.letter_dates(lines), lines, taken)


def _signed_letter(lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Reading]:
    """A letter's signature, singled out by the letter (``_the_letters_own``) where it is a
    clinician's own (``letter.signed_by_a_clinician``); the letter's head (the addressee,
    the letterhead) explains the names in it, as a label ("Re:", "GP:") does."""
    found = letter.signatures(lines)
    if len(found) == 1 and not letter.signed_by_a_clinician(lines, found[0]):
        return found
    taken = claimed("clinician", lines, anchors) | letter.addressed(lines)
    return _the_letters_own("clinician", found, lines, taken)


def _the_letters_own(
    field: str, found: list[Reading], lines: Sequence[Line], taken: frozenset[Token]
) -> list[Reading]:
    """``found``'s one reading, singled out by the letter itself, where the pages hold a
    salutation and no other value of the field's type that ``taken`` leaves unexplained (a
    value it explains, printed again elsewhere, is explained too); else ``found`` as it is,
    position alone."""
    if len(found) != 1 or not letter.salutes(lines):
        return found
    only = found[0]
    named = rivals(field, lines)
    known = {r.key for r in named if set(r.tokens) & taken} | {rival_key(field, only.value)}
    others = [r for r in named if r.key not in known and not set(r.tokens) & set(only.tokens)]
    return found if others else [replace(only, anchored=True)]


def _day_or_month(readings: list[Reading], lines: Sequence[Line]) -> list[Reading]:
    """Dates are read day first where the page shows that it prints them so ("(DD/MM/YYYY)",
    "23/11/1970"). Elsewhere, on a page that prints them month first ("(MM/DD/YYYY)",
    "07/16/1952") or gives no sign either way (a US referral's "04/07/2026" beside its
    ZIP code), a date whose day and month could swap is not singled out: which it is goes
    to review rather than a guess."""
    text = "\n".join(joined(line.tokens) for line in lines)
    if day_first(text) and not month_first(text):
        return readings
    return [
        _month_first(r)
        if _noted_month_first(r, lines)
        else replace(r, contested=True)
        if day_month_swappable(joined(r.tokens))
        else r
        for r in readings
    ]


def _noted_month_first(reading: Reading, lines: Sequence[Line]) -> bool:
    """Whether the date's own label says it prints the month first ("Referral date
    (MM/DD/YYYY): 12/05/2025"): its line's words before the date hold the note."""
    first = reading.tokens[0]
    line = next((ln for ln in lines if first in ln.tokens), None)
    if line is None or not isinstance(reading.value, str):
        return False
    before = line.tokens[: line.tokens.index(first)]
    return bool(before) and month_first_note(joined(before))


def _month_first(reading: Reading) -> Reading:
    """A numeric date read day first, read again month first as its label says: the two
    swap only where both read as months, so the swap is a date."""
    if not day_month_swappable(joined(reading.tokens)):
        return reading
    year, month, day = str(reading.value).split("-")
    return replace(reading, value=f"{year}-{day}-{month}")


def _weaker(reading: Reading, share: float) -> Reading:
    return replace(reading, confidence=share * reading.confidence)


def _stamped(reading: Reading, overprinted: list[Token]) -> Reading:
    """A value beside a rubber stamp may have lost a letter to its ink while OCR stays sure."""
    return _weaker(reading, STAMPED) if near(reading.tokens, overprinted) else reading


def _best(
    found: list[Candidate], parser: Parser, others: Sequence[Rival], taken: frozenset[Token]
) -> Reading | None:
    """The anchor's one reading: close right of it, else below it, else far right of it."""
    parsed_all = [(cand, parser(cand.tokens)) for cand in found]
    # Only a value that parses under the label makes its far-right neighbour doubtful.
    below = any(c.method == "anchor:below" and p is not None for c, p in parsed_all)
    ranked = []
    for cand, parsed in parsed_all:
        if parsed is None:
            continue
        value, used, quality = parsed
        place = _place(cand)
        # Far right of a label with a value under it: a grid's next cell is as likely.
        geometry = PLACES[place] * (0.9 if place == "far" and below else 1.0)
        sure = cand.anchor.score * geometry * quality
        rank = ("right", "below", "far", "wrapped").index(place)
        field = "referral_date" if cand.anchor.kind == "plain_date" else cand.anchor.kind
        # Words another label points at too are claimed twice: which field's is unsure.
        doubt = (
            bool(set(used) & taken)
            or cand.cut
            or contested(field, value, used, cand.anchor, place == "right", others)
        )
        reading = Reading(value, tuple(used), sure, cand.method, contested=doubt)
        ranked.append((rank, -sure, reading))
    return min(ranked, key=lambda r: r[:2])[2] if ranked else None


def _place(cand: Candidate) -> str:
    if cand.method == "anchor:below":
        return "below"
    if cand.method == "anchor:wrapped":
        return "wrapped"
    return "right" if cand.gap <= CLOSE_GAP else "far"


def _with_heading(readings: list[Reading], headings: list[Reading]) -> list[Reading]:
    """A heading names the clinic when no label does, and backs a label that agrees.

    A labelled value OCR was unsure of, spelt as a heading spells it (two
    readings of separate print), is as sure as the surer of the two; a
    heading a letter or two off it is a rival (one of the two is misread, and
    OCR is often sure of a misread: "Ciinic" at 0.97); a heading that
    disagrees more is left out: it may be the receiving hospital's.
    """
    if not readings:
        return headings[:1] if len({_folded(h.value) for h in headings}) == 1 else []
    if len({_folded(r.value) for r in readings}) != 1:
        return readings
    best = max(readings, key=lambda r: r.confidence)
    agree = [h for h in headings if _folded(h.value) == _folded(readings[0].value)]
    if not agree:
        # A heading a letter or two off the label's value: one of them is misread.
        misread = [h for h in headings if _near(_folded(h.value), _folded(best.value))]
        return readings + [replace(h, confidence=best.confidence) for h in misread]
    sure = max(best.confidence, *(h.confidence for h in agree))
    return [replace(best, confidence=sure, method=f"{best.method}+heading")]


def _near(a: str, b: str) -> bool:
    return len(a) >= 6 and 0 < edit_distance(a, b) <= 2


def _folded(value: FieldValueType) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", str(value).lower()).split())


def _clinic_headings(lines: Sequence[Line]) -> list[Reading]:
    """Each page's heading (its first two lines) that reads as a clinic's name."""
    found = []
    for page in dict.fromkeys(line.page for line in lines):
        for line in [line for line in lines if line.page == page][:2]:
            value = plain_text(joined(line.tokens))
            words = set(re.findall(r"[a-z]+", value.lower()))
            named = bool(words & _CLINIC_WORDS) and not words & _TITLE_WORDS
            prose = len(value.split()) > 6 or joined(line.tokens).endswith(".")
            checked = values.place(line.tokens)
            if checked is None or not named or prose or ":" in value:
                continue
            if not any(c.isdigit() for c in value):
                sure = HEADING * checked[2]
                value = str(checked[0])
                found.append(Reading(value, tuple(line.tokens), sure, "heading", anchored=False))
    return found
