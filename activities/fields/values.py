"""What a referral field's value looks like: a date, an identifier, a name, free text.

Each parser takes the words found where a label points and returns the value
in normal form, the words it used, and how sure the words make it: OCR's
confidence in them, less where they leave doubt (two dates after one label, a
misread no dictionary repairs). A word a dictionary knows corroborates itself,
so free text counts OCR's doubt only over the words it does not know; a date
or an identifier counts it over every word. None when the words are no such
value, so the next place the label points is tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from activities.fields.choose import ocr_confidence
from activities.fields.layout import Token, joined
from activities.fields.normalise import dates_in, identifier, plain_text
from activities.fields.wording import check, english, misread
from custody.fields import FieldValueType

Parsed = tuple[FieldValueType, Sequence[Token], float]
Parser = Callable[[Sequence[Token]], Parsed | None]

#: How sure OCR must be of a free-text word no dictionary knows (measured: names read
#: right are 0.95 or more on drawn referrals, degraded ones included).
WORD_BAR = 0.95
#: How much less sure free text is with a word that fails that check: below every bar.
IMPLAUSIBLE = 0.8
#: Words that join a label to its value in a sentence ("number is P-0042").
_LINKING = frozenset({"is", "was", "of", "no", "no.", "number", "=", "-", ":"})
#: A value never opens with one of these in lower case: the label's words run on.
_RUN_ON = frozenset({"in", "for", "of", "to", "from", "by", "with", "and", "or", "on"})
#: A label's words followed by one of these are a sentence's, not a label's value.
_VERBS = frozenset({"is", "was", "are", "were", "has", "have", "had", "will", "would"})
_ID_PIECE = re.compile(
    r"^[-/._]?[A-Z0-9]*\d[A-Z0-9]*[).,;]?$|^[-/._][A-Z0-9]{1,3}[).,;]?$|^[-/._]$"
)
_ID = re.compile(r"^[A-Za-z]{0,6}[#]?[A-Za-z0-9]*(?:[-/._ ]?[A-Za-z0-9]+)*$")
#: Words of a role or a heading, never of a clinician's name.
_ROLES = frozenset(
    (
        *("consultant", "doctor", "physician", "clinician", "practitioner", "nurse", "surgeon"),
        *("gp", "registrar", "referrer", "receiving", "referring", "details", "name", "patient"),
    )
)
#: Words of an institution: a clinic's name holds one ("Castlegate Surgery").
_INSTITUTIONS = frozenset(
    (
        *("clinic", "clinics", "practice", "surgery", "centre", "center", "hospital", "medical"),
        *("medicine", "health", "healthcare", "group", "unit", "service", "services", "infirmary"),
        *("partnership", "trust", "institute", "foundation", "polyclinic", "dispensary"),
    )
)
#: Words of a name printed in lower case ("Grace da Silva", "Dolores bin Yusof").
_PARTICLES = frozenset(
    (
        *("da", "de", "del", "della", "der", "di", "do", "dos", "du", "la", "le", "van", "von"),
        *("bin", "binti", "bint", "ibn", "ap", "al", "el", "ten", "ter", "y", "zu", "and"),
    )
)
TITLED = re.compile(r"^(?:Dr|Prof|Mr|Mrs|Ms|Miss|Mx|Sister|Sr)\b\.?", re.I)
#: A label's first words: one ending in a colon among them makes the line a label's.
_LABEL_WORDS = 5
#: Letters after a name that are a qualification ("MRCP", "DO", "PhD", "FRCS(Ed)"): kept
#: with the name after its comma, since the page prints them as part of it.
_POST_NOMINAL = re.compile(r"^(?:[A-Z]{2,6}|PhD|MBChB|MBBS|BSc|MSc|MPH|FRCS\(\w+\)|MB|ChB)[.,]?$")


def date(tokens: Sequence[Token]) -> Parsed | None:
    hits = dates_in(joined(tokens))
    if not hits:
        return None
    # Two dates after one label (a range, a DOB run on) leave it unsure which.
    quality = (0.8 if hits[0].repaired else 1.0) * (0.8 if len(hits) > 1 else 1.0)
    return hits[0].iso, tokens, quality * ocr_confidence(tokens)


def identifier_value(tokens: Sequence[Token]) -> Parsed | None:
    """An identifier as printed, its pieces rejoined ("P630 306", "PT-0421 -A", "SUB/2291-07"),
    any separator people print (``-/._`` or a space) and the brackets around it left out."""
    rest = list(tokens)
    while rest[1:] and rest[0].text.lower() in _LINKING:
        rest.pop(0)
    used = [rest[0]]
    for tok in rest[1:]:
        close = tok.x0 - used[-1].x1 <= 1.0 * tok.height
        if not close or not _ID_PIECE.match(tok.text) or used[-1].text.endswith((")", ",", ";")):
            break
        used.append(tok)
    # "(P-0042)", "[SUB-7]": brackets printed around an identifier are not part of it.
    value = identifier(_rejoined(used)).lstrip("([").rstrip(").,;]")
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    if not _ID.match(value) or digits < 3 or letters > 6 or len(value) > 24 or dates_in(value):
        return None
    return value, used, (1.0 if len(used) == 1 else 0.97) * ocr_confidence(used)


def _rejoined(pieces: Sequence[Token]) -> str:
    """Pieces OCR split: touching ones run together, ones a space apart keep the space."""
    text = pieces[0].text
    for before, tok in zip(pieces, pieces[1:], strict=False):
        text += ("" if tok.x0 - before.x1 <= 0.35 * tok.height else " ") + tok.text
    return text


def text(tokens: Sequence[Token]) -> Parsed | None:
    """Free text, its words checked: OCR is often sure of a word it misread ("Persisient").

    A word no dictionary knows (a name, a misread) must be one OCR was very
    sure of, and a visible slip ("J1n", an accent) one a known word repairs;
    otherwise the value is made unsure enough to need review.
    """
    if sum(c.isalpha() for c in joined(tokens)) < 2 or tokens[-1].text.endswith(":"):
        return None  # empty, or the next label of a list rather than a value
    if tokens[0].text.lower() in _VERBS:
        return None  # "The main concern is worsening ...": a sentence, read as one
    first = tokens[0].text
    if first.lower() in _RUN_ON and (first.islower() or first.isupper()):
        return None  # "Reason in brief ...", "Reason for this referral": the label runs on
    if any(t.text.endswith(":") for t in tokens[:_LABEL_WORDS]):
        # "Note: The patient has ...", "Agrees to information sharing: ...": another
        # label's line, whether or not a label list knows its wording
        return None
    checked = check(tokens, english)
    plausible = not checked.doubt and checked.confidence >= WORD_BAR
    sure = checked.confidence * (1.0 if plausible else IMPLAUSIBLE)
    return plain_text(joined(list(checked.tokens))), tokens, sure


def reason(tokens: Sequence[Token]) -> Parsed | None:
    """A reason: free text whose words a dictionary mostly knows. Clinical words it lacks
    ("haemochromatosis") pass one at a time; two unknown words are a misread line ("Atriai
    fibriliation") far more often than a reason, however sure OCR was of them, and so is
    one a letter off a known word ("tigling", published at 0.94 on the sixth generator)."""
    parsed = text(tokens)
    if parsed is None:
        return None
    unknown = [w for w in re.findall(r"[A-Za-z]+", str(parsed[0])) if not english(w)]
    if len(unknown) < 2 and not any(misread(w) for w in unknown):
        return parsed
    return parsed[0], parsed[1], IMPLAUSIBLE * parsed[2]


def person(tokens: Sequence[Token]) -> Parsed | None:
    """A clinician's name: free text of two to five words, no digits, a capital to start.

    A comma ends the name ("Dr A. Jones, Castlegate Surgery"). Words of a role or
    an institution left in it ("Dr Jones GP", "Receiving Consultant"), or, without a
    title, dictionary words throughout ("Patient Details"), are a heading's or a
    neighbour's as likely as a name's: read, but too unsure to publish.
    """
    cut = next((i for i, t in enumerate(tokens) if t.text.endswith(",")), None)
    if cut is not None and cut >= 1:
        tokens = tokens[: cut + 1 + len(_qualifications(tokens[cut + 1 :]))]
    parsed = text(tokens)
    if parsed is None:
        return None
    value = str(parsed[0])
    words = value.split()
    if any(c.isdigit() for c in value) or not 2 <= len(words) <= 5 or not value[:1].isupper():
        return None
    bare = [w.strip(".,'()").lower() for w in words]
    if set(bare) & (_ROLES | _INSTITUTIONS):
        return value, parsed[1], parsed[2] * IMPLAUSIBLE
    if any(w[:1].islower() and w.lower() not in _PARTICLES for w in words):
        # "Prof. lise Brandt": a name's word set in lower case is OCR's misread capital
        # ("I" read "l") as often as a particle no list here knows.
        return value, parsed[1], parsed[2] * IMPLAUSIBLE
    if TITLED.match(value):
        return value, parsed[1], parsed[2]
    named = any(w.isalpha() and not english(w) for w in bare)
    return value, parsed[1], parsed[2] * (0.97 if named else IMPLAUSIBLE)


def _qualifications(tokens: Sequence[Token]) -> Sequence[Token]:
    """The qualifications printed after a name's comma ("Rosalind Fenwick, DO", "J. Amis,
    MRCP, FRCR"), all of the words that follow or none: a role ("GP") or a clinic after
    the comma ends the name there."""
    if not tokens or any(t.text.strip(".,").lower() in _ROLES for t in tokens):
        return ()
    return tokens if all(_POST_NOMINAL.match(t.text) for t in tokens) else ()


def place(tokens: Sequence[Token]) -> Parsed | None:
    """A clinic's name: free text of at most eight words, no more than a house number in it.

    A name with no word of an institution in it ("Cardiology", "Level 3") may be a
    department, a ward or a neighbouring cell: read, but too unsure to publish.
    """
    parsed = text(tokens)
    if parsed is None or len(str(parsed[0]).split()) > 8:
        return None
    words = set(re.findall(r"[a-z]+", str(parsed[0]).lower()))
    return parsed if words & _INSTITUTIONS else (parsed[0], parsed[1], IMPLAUSIBLE * parsed[2])
