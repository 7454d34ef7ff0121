"""Detectors: the identifiers a redacted view must not show, by label and by shape.

Custom recognisers, each a label's wording (the context) and the value's
shape: a value counts beside its own label, right of it on the line or just
below it (a boxed grid puts the value under its label), because a referral's
numbers and dates are told apart by their labels. Shapes distinctive enough
to be found anywhere are: a ``P-``/``PT-`` participant ID, an MRN written
with its prefix (``MRN-687024``, ``MRN:687024``), a name after a title or
starting with a given name (``activities.redact.names``), and phone numbers,
email and postal addresses and organisations (``activities.redact.places``).

No packaged model fits: Presidio's recognisers need a spaCy model, and the
official ones are not on PyPI (the copies there are unofficial re-uploads);
GLiNER and Flair fetch their weights from a model hub at run time. The same
recognisers re-run on the finished view (``activities.redact.scan``), so a value
the source's words did not show them (an annotation, a label image) is still
found where the view's pixels print it. What no recogniser knows (an unseen
label's wording, a name the lexicon lacks) they do not find: that is why the
allow-list sweep (``activities.redact.allow``) runs beside them, in the plan and
in the check, and removes every word not known to be safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from activities.redact import names, places
from activities.redact.lines import Line, Tok
from activities.redact.policy import Detector

_DATE = (
    r"\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}"
    r"|\d{1,2}[ -][A-Za-z]{3,9}\.?[ -]\d{4}"
    r"|[A-Za-z]{3,9}\.? \d{1,2},? \d{4}"
)


@dataclass(frozen=True)
class Hit:
    """Words to remove, why, and the strings they print (what the check looks for)."""

    toks: tuple[Tok, ...]
    reason: str  # "field", "detector" or "sweep"
    source: str  # the field's or detector's name
    strings: tuple[str, ...]


@dataclass(frozen=True)
class Recogniser:
    name: Detector
    context: re.Pattern[str]
    value: re.Pattern[str]
    joiner: str  # how the value's words join: dates keep spaces, identifiers do not
    max_tokens: int
    #: The widest gap inside a value, in word heights: an identifier OCR split in
    #: two ("PT-0421 -A") is close; the next label is further off.
    gap: float
    anywhere: re.Pattern[str] | None = None
    #: A further test of a value's text beyond its shape (a name is no form word).
    accept: Callable[[str], bool] | None = None
    #: The strings a value leaks as (a name: each of its words too, in any order).
    parts: Callable[[str], tuple[str, ...]] = lambda value: (value,)


# Each recogniser's label wording and value shape; ``_ANY_*`` are the shapes
# distinctive enough to count without a label.
_PARTICIPANT_LABEL = r"participant\s*(?:id|identifier|no\b\.?|number|#)|study\s*id"
_PARTICIPANT = r"[A-Za-z]{0,4}[-#]?[A-Za-z0-9-]*\d{3,}[A-Za-z0-9-]*"
_ANY_PARTICIPANT = re.compile(r"(?<![A-Za-z0-9])PT?-\d{4,6}(?:-[A-Z])?(?![A-Za-z0-9])")
_MRN_LABEL = (
    r"\bmrn|medical\s*record\s*(?:no\b\.?|number|#)|hospital\s*(?:no\b\.?|number|#)"
    r"|\b(?:nhs|ur|urn)\s*(?:no\b\.?|number|#)"
)
_MRN = r"(?:[A-Za-z]{0,4}[-#:]?)?\d{4,10}(?:-\d{1,4})?"
_ANY_MRN = re.compile(r"(?<![A-Za-z0-9])(?:MRN|MR|HN|URN)\s?[-:#]?\s?\d{4,10}(?![0-9])", re.I)
_BIRTH_LABEL = r"date\s*of\s*birth|\bdob\b|d\.o\.b|birth\s*date|\bborn\b"
_PHONE_LABEL = r"\b(?:phone|ph|tel|telephone|mobile|cell|fax|contact\s*(?:no|number))\b(?!\s*date)"
_PHONE = r"\+?[\d() .-]{7,}"
_ADDRESS_LABEL = r"\baddress\b|\baddr\b|lives\s*at|resid(?:es|ing)\s*at"


def _recogniser(
    name: Detector,
    label: str,
    value: str,
    joiner: str,
    max_tokens: int,
    gap: float,
    anywhere: re.Pattern[str] | None = None,
) -> Recogniser:
    """A label matches in any case (``DOB``, ``Dob``); a value's shape as written."""
    return Recogniser(
        name, re.compile(label, re.I), re.compile(value), joiner, max_tokens, gap, anywhere
    )


#: One row a recogniser: name, label, value, joiner, max_tokens, gap, anywhere.
RECOGNISERS: tuple[Recogniser, ...] = (
    _recogniser("participant_id", _PARTICIPANT_LABEL, _PARTICIPANT, "", 3, 0.5, _ANY_PARTICIPANT),
    _recogniser("mrn", _MRN_LABEL, _MRN, "", 3, 0.5, _ANY_MRN),
    _recogniser("date_of_birth", _BIRTH_LABEL, _DATE, " ", 4, 1.5),
    Recogniser(
        "patient_name",
        names.LABEL,
        names.VALUE,
        " ",
        4,
        1.5,
        accept=names.looks_like_name,
        parts=names.name_parts,
    ),
    _recogniser("phone", _PHONE_LABEL, _PHONE, " ", 4, 0.8),
    _recogniser("address", _ADDRESS_LABEL, r".*\w.*", " ", 12, 1.5),
)


def detect(lines: Sequence[Line], enabled: Sequence[Detector], unread: bool = False) -> list[Hit]:
    """Every hit of the ``enabled`` detectors in ``lines``; with ``unread`` (the plan's,
    not the check's), also the empty slot of each identifier's label whose value no
    word was read in (``_unread_slot``)."""
    hits: list[Hit] = []
    for rec in RECOGNISERS:
        if rec.name in enabled:
            hits += _labelled(rec, lines, unread)
            hits += _anywhere(rec, lines)
    if "person_name" in enabled:
        hits += _spans("person_name", ((p, a, b) for p, a, b in names.names(lines)), True)
    if "phone" in enabled or "email" in enabled:
        hits += _reach(lines, enabled)
    if "address" in enabled or "organisation" in enabled:
        hits += _places(lines, enabled)
    return hits


def _spans(
    kind: str, found: Iterable[tuple[Line, int, int]], person: bool = False
) -> Iterator[Hit]:
    for line, start, end in found:
        toks, text = line.covering(start, end), line.text[start:end]
        yield Hit(toks, "detector", kind, names.name_parts(text) if person else (text,))


def _reach(lines: Sequence[Line], enabled: Sequence[Detector]) -> Iterator[Hit]:
    for line in lines:
        if "phone" in enabled:
            yield from _spans("phone", ((line, a, b) for a, b in places.phones(line)))
        if "email" in enabled:
            yield from _spans("email", ((line, a, b) for a, b in places.emails(line)))


def _places(lines: Sequence[Line], enabled: Sequence[Detector]) -> Iterator[Hit]:
    """Address lines whole, and the organisation lines about them."""
    addresses = places.address_lines(lines)
    if "address" in enabled:
        for n in addresses:
            yield Hit(lines[n].tokens, "detector", "address", (lines[n].text,))
    if "organisation" in enabled:
        for n in places.organisation_lines(lines, addresses):
            yield Hit(lines[n].tokens, "detector", "organisation", (lines[n].text,))


def name_parts(name: str) -> tuple[str, ...]:
    """A name and each of its words but titles: each is a string the check looks for."""
    return names.name_parts(name)


def _labelled(rec: Recogniser, lines: Sequence[Line], unread: bool = False) -> Iterator[Hit]:
    for n, line in enumerate(lines):
        for match in rec.context.finditer(line.text):
            label = line.covering(match.start(), match.end())
            last = label[-1]
            tail = line.text[match.end() : line.spans()[line.tokens.index(last)][1]].strip(" :#.-")
            if tail and _fits(rec, tail):
                yield Hit((last,), "detector", rec.name, rec.parts(tail))
                continue
            after = line.tokens[line.tokens.index(last) + 1 :]
            found = _value(rec, after) or _value(rec, _below(lines, n, label))
            if found is not None:
                yield Hit(found[0], "detector", rec.name, rec.parts(found[1]))
            elif unread and rec.name in _SLOTS:
                yield from _unread_slot(rec, lines, line, last)


#: Identifiers whose label's empty slot the plan paints (a name or an address is read as
#: words where it is printed at all; a number or a date in comb boxes is not).
_SLOTS = frozenset({"participant_id", "mrn", "date_of_birth", "phone"})
_UNREAD_WORDS = 3  # words read after a label, at most, for its slot to count as unread
_SLOT_PAD = 0.6  # label heights above and below the label's line the slot reaches


def _unread_slot(rec: Recogniser, lines: Sequence[Line], line: Line, last: Tok) -> Iterator[Hit]:
    """The rest of a label's phrase, to the next phrase or the page's text edge, where an
    identifier's label stands with no value read beside or under it.

    OCR reads nothing in comb boxes (one character a box) and little in a faint or
    struck-through cell, so the value may be printed there all the same: a birth date in
    comb boxes, never read, was readable to another OCR engine in a view marked clean.
    The slot is painted whole; its hit has no strings (nothing was read to look for), and
    the check does not run this rule (a painted slot reads as an unread one)."""
    phrases = line.phrases()
    mine = next(k for k, p in enumerate(phrases) if last in p.tokens)
    rest = phrases[mine].tokens[phrases[mine].tokens.index(last) + 1 :]
    if len(rest) > _UNREAD_WORDS:
        return  # a sentence goes on after the label ("born in Leeds and ..."): not a slot
    page = [t for other in lines if other.page == line.page for t in other.tokens]
    right = phrases[mine + 1].tokens[0].x0 if mine + 1 < len(phrases) else max(t.x1 for t in page)
    pad = round(_SLOT_PAD * last.height)
    top, bottom = min(t.y0 for t in line.tokens) - pad, max(t.y1 for t in line.tokens) + pad
    if right - last.x1 > last.height:
        slot = Tok("", 0.0, line.page, last.x1 + 1, top, right - 1, bottom)
        yield Hit((slot, *rest), "detector", rec.name, ())


def _value(rec: Recogniser, toks: Sequence[Tok]) -> tuple[tuple[Tok, ...], str] | None:
    """The longest run of the first words that has the value's shape."""
    run: list[Tok] = []
    for tok in toks:
        if not run and tok.text.strip(":#") == "":
            continue  # the label's colon, read as a word of its own
        if run and (tok.x0 - run[-1].x1 > rec.gap * tok.height or tok.text.endswith(":")):
            break
        run.append(tok)
        if len(run) == rec.max_tokens:
            break
    for k in range(len(run), 0, -1):
        text = rec.joiner.join(t.text for t in run[:k]).strip(" :;,.")
        if _fits(rec, text.lstrip(":#-")):
            return tuple(run[:k]), text.lstrip(":#-")
    return None


def _fits(rec: Recogniser, text: str) -> bool:
    return bool(rec.value.fullmatch(text)) and (rec.accept is None or rec.accept(text))


def _below(lines: Sequence[Line], n: int, label: Sequence[Tok]) -> list[Tok]:
    """The words under a label, from the first that starts near its left edge."""
    x0, bottom, h = label[0].x0, max(t.y1 for t in label), label[0].height
    for line in lines[n + 1 :]:
        if line.tokens[0].page != label[0].page or line.tokens[0].y0 - bottom > 4 * h:
            return []
        near = [t for t in line.tokens if abs(t.x0 - x0) <= 2 * h]
        if near:
            return [t for t in line.tokens if t.x0 >= near[0].x0]
    return []


def _anywhere(rec: Recogniser, lines: Sequence[Line]) -> Iterator[Hit]:
    if rec.anywhere is None:
        return
    for phrase in (part for line in lines for part in line.phrases()):
        for match in rec.anywhere.finditer(phrase.text):
            toks = phrase.covering(match.start(), match.end())
            yield Hit(toks, "detector", rec.name, (match.group(),))
