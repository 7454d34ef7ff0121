"""Rivals: the other values of a field's type on the pages, and whether a label beats them.

A referral holds several dates (birth, appointment, fax, the letter's own),
several identifiers (NHS number, MRN, phone and fax numbers) and several
names (the GP, the consultant it is addressed to, the clinician who signs).
A rival another label points at (the date beside "DOB", the number beside
"MRN") is explained by that label and competes no more; a value another
label points at as well is claimed twice, and is contested. A name printed
twice and spelt two ways ("Dr A. Okafor" and "Dr A. Okafur") is contested
too: one of the two is misread, and OCR is often sure of a misread. Among the rest, a
label singles its value out only when it names the field itself (not a
generic "Date:", "Clinician:" or "Signed:"), was read as printed (not one
or two letters off), and points at the value more nearly than at any rival:
the value close right of it on its own line, or, under it, far right of it
(a list's value column) or starting the next line, with no rival of another
value about as near. A reading whose label
does not is *contested*, and never clears its bar (``choose``).

Free text (a clinic's name, a reason) has no type to have rivals of.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from activities.fields.anchors import Anchor, candidates
from activities.fields.layout import Line, Token, joined
from activities.fields.normalise import dates_in, edit_distance

#: Labels that name a kind of value but not which one of the page's values it is.
GENERIC = frozenset(
    (
        *("Date:", "Dated", "Dated:", "Participant:", "Clinician:", "GP:", "Doctor:"),
        *("Signed:", "Clinic:", "Practice:", "Surgery:", "Reason", "Problem:", "Indication"),
        # Who signed, or who is responsible, need not be who refers (a secretary "p.p.").
        *("Signed by", "Responsible clinician", "Clinician name", "Completed by"),
    )
)
#: A rival this many times as far from the label as the value (plus one label height)
#: is as likely the label's: the label does not single the value out.
AS_NEAR = 1.5
_PHRASE_GAP = 2.0  # word heights: words further apart on a line are separate phrases
_TITLE = re.compile(r"^(?:Dr|Prof|Mr|Mrs|Ms|Miss|Mx|Sister|Sr)\.?$", re.I)
_ID_SHAPE = re.compile(r"^[A-Za-z]{0,6}[-/.#_]?[A-Za-z0-9]*\d[A-Za-z0-9]*(?:[-/._][A-Za-z0-9]+)*$")


@dataclass(frozen=True)
class Rival:
    key: str
    tokens: tuple[Token, ...]


def rivals(field: str, lines: Sequence[Line]) -> list[Rival]:
    """Every value of ``field``'s type on the pages, each with its words."""
    if field == "referral_date":
        return _dates(lines)
    if field == "participant_id":
        return _identifiers(lines)
    if field == "clinician":
        return _names(lines)
    return []


def key(field: str, value: object) -> str:
    """A value as rivals are compared: a date as ISO, an identifier's letters and digits,
    a name by its last word (the title and first names may be printed or not)."""
    text = str(value)
    if field == "clinician":
        words = re.findall(r"[a-z']+", text.lower())
        return words[-1] if words else ""
    return re.sub(r"[^a-z0-9]", "", text.lower()) if field == "participant_id" else text


def claimed(field: str, lines: Sequence[Line], anchors: Sequence[Anchor]) -> frozenset[Token]:
    """The words other fields' labels (and distractors') point at."""
    kinds = {field, "plain_date"} if field == "referral_date" else {field}
    words: set[Token] = set()
    for anchor in anchors:
        if anchor.kind not in kinds:
            for cand in candidates(anchor, lines, anchors):
                # A wrapped value is prose's; a grid's last label "wraps" to the next row.
                if cand.method != "anchor:wrapped":
                    words.update(cand.tokens)
    return frozenset(words)


def unexplained(found: Sequence[Rival], others: frozenset[Token]) -> list[Rival]:
    """The rivals none of the words ``others`` (``claimed``) explains."""
    return [r for r in found if not set(r.tokens) & others]


def contested(
    field: str,
    value: object,
    tokens: Sequence[Token],
    anchor: Anchor,
    close: bool,
    found: Sequence[Rival],
) -> bool:
    """Whether rivals of another value stand where ``anchor`` could point as well.

    ``close``: the value sits close right of the label on its own line, where
    the label points and no rival is nearer (the value is the first words).
    """
    own = key(field, value)
    others = [r for r in found if r.key != own and not set(r.tokens) & set(tokens)]
    if field == "clinician" and any(_misspelt(own, r.key) for r in others):
        return True  # the name printed twice, spelt two ways: one of them is misread
    if not others:
        return False
    if anchor.kind == "plain_date" or anchor.wording in GENERIC or anchor.score < 1.0:
        return True
    if close:
        return False
    reach = AS_NEAR * _distance(anchor, tokens) + 1.0
    return any(_distance(anchor, r.tokens) <= reach for r in others)


def _misspelt(a: str, b: str) -> bool:
    """Two surnames a letter or two apart: one name, one of its readings misread."""
    return len(a) >= 4 and len(b) >= 4 and 0 < edit_distance(a, b) <= 2


def _distance(anchor: Anchor, tokens: Sequence[Token]) -> float:
    """From the label's box to the words' box, in label heights (infinite across pages)."""
    if not tokens or tokens[0].page != anchor.tokens[0].page:
        return math.inf
    a = (anchor.x0, min(t.y0 for t in anchor.tokens), anchor.x1, max(t.y1 for t in anchor.tokens))
    b = (
        min(t.x0 for t in tokens),
        min(t.y0 for t in tokens),
        max(t.x1 for t in tokens),
        max(t.y1 for t in tokens),
    )
    dx = max(0, b[0] - a[2], a[0] - b[2])
    dy = max(0, b[1] - a[3], a[1] - b[3])
    return math.hypot(dx, dy) / anchor.height


def _dates(lines: Sequence[Line]) -> list[Rival]:
    found = []
    for line in lines:
        for phrase in line.phrases(_PHRASE_GAP):
            for hit in dates_in(phrase.text):
                found.append(Rival(hit.iso, _covering(phrase.tokens, hit.start, hit.end)))
    return found


def _covering(tokens: Sequence[Token], start: int, end: int) -> tuple[Token, ...]:
    """The words of ``tokens`` (joined by single spaces) that characters start..end fall in."""
    out, at = [], 0
    for tok in tokens:
        if at < end and start < at + len(tok.text):
            out.append(tok)
        at += len(tok.text) + 1
    return tuple(out) or tuple(tokens)


def _identifiers(lines: Sequence[Line]) -> list[Rival]:
    """Words shaped like an identifier: three digits or more, at most six letters, no date."""
    found = []
    for line in lines:
        for tok in line.tokens:
            word = tok.text.strip(".,;:()[]#")
            digits = sum(c.isdigit() for c in word)
            letters = sum(c.isalpha() for c in word)
            if digits >= 3 and letters <= 6 and _ID_SHAPE.match(word) and not dates_in(word):
                found.append(Rival(key("participant_id", word), (tok,)))
    return found


def _names(lines: Sequence[Line]) -> list[Rival]:
    """A title and the capitalised words after it: "Dr A. Okafor", "Prof Ilse Brandt"."""
    found = []
    for line in lines:
        words = list(line.tokens)
        for i, tok in enumerate(words):
            if not _TITLE.match(tok.text.strip(",")):
                continue
            name = []
            for after in words[i + 1 : i + 5]:
                if not after.text[:1].isupper():
                    break
                name.append(after)
                if after.text.endswith(","):
                    break
            if name:
                found.append(Rival(key("clinician", joined(name)), (tok, *name)))
    return found
