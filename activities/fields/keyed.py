"""Labels and the values right of them: the ways a form prints a label beside its value.

``beside``: a label ending in a colon and the phrase right of it. ``named``:
a label without a colon whose words say it is one ("Date Sent", "Project #",
:data:`LABEL_WORDS`). ``label-column``: a column of such labels down the
left margin whose values stand in a column of their own to the right. In
every case the value is left out when its sentence runs on to the next line
(where the answer ends is a guess) or when it is a label itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from activities.fields.phrases import Phrase, Proposal, Sheet

#: A value further right of its label than this many heights belongs to something else.
_BESIDE_REACH = 8.0
_COLUMN_REACH = 15.0
#: Words labels are made of: without its colon, a phrase with none of them is no label.
_LABELS = (
    "account address amount approved attn brand budget by cc city client code company "
    "comments contact copies cost customer date dept department description division "
    "due event fax field file from job location model name no number order page pages "
    "phone price product project qty quantity rate re ref reference region remarks "
    "requested sample serial signature size state status style subject submitted "
    "supplier tel telephone time title to total type vendor weight zip"
)
LABEL_WORDS = frozenset(_LABELS.split())
_WORD = re.compile(r"[a-z]+")


def keyed_pairs(sheet: Sheet) -> Iterable[Proposal]:
    for key in sheet.phrases:
        value = sheet.right(key)
        if value is None or not _value(value) or _continued(sheet, value):
            continue
        gap = (value.x0 - key.x1) / key.h
        if key.colon and gap <= _BESIDE_REACH:
            yield Proposal(key, (value,), "beside")
        elif key.colon or not is_label(key):
            continue
        elif key.pos == 0 and gap <= _COLUMN_REACH and _in_label_column(sheet, key, value):
            yield Proposal(key, (value,), "label-column")
        elif gap <= _BESIDE_REACH and not is_label(value) and not _header_row(sheet, key):
            yield Proposal(key, (value,), "named")


def is_label(phrase: Phrase) -> bool:
    """A few words, at least one of them a label's, not the tail of a sentence."""
    words = _WORD.findall(phrase.text.lower())
    marked = phrase.text.rstrip(".: ").endswith(("#", " No"))
    printed = not phrase.text[:1].islower()
    named = marked or any(w in LABEL_WORDS for w in words)
    return phrase.wordy and printed and len(words) <= 4 and named


def _in_label_column(sheet: Sheet, key: Phrase, value: Phrase) -> bool:
    """Two more labels start where ``key`` starts, their values where ``value`` starts."""
    peers = [
        p
        for p in sheet.aligned(key, within=6)
        if p.pos == 0 and p.wordy and _starts_near(sheet.right(p), value)
    ]
    return len(peers) >= 2


def _starts_near(phrase: Phrase | None, value: Phrase) -> bool:
    return phrase is not None and abs(phrase.x0 - value.x0) < 1.5 * value.h


def _header_row(sheet: Sheet, phrase: Phrase) -> bool:
    """A row of three or more short phrases of words: a table's headers, not labels and values."""
    row = sheet.row(phrase)
    return len(row) >= 3 and all(p.wordy and len(p.text.split()) <= 3 for p in row)


def _value(phrase: Phrase) -> bool:
    """Something a label can own: not a label itself, and more than a stroke or a letter."""
    letters = sum(c.isalnum() for c in phrase.text)
    return not phrase.colon and letters >= 2


def _continued(sheet: Sheet, value: Phrase) -> bool:
    """The next line starts under ``value`` in lower case or a bracket: the sentence runs on."""
    for p in sheet.phrases:
        close = p.line == value.line + 1 and 0 <= p.y0 - value.y1 < 0.8 * value.h
        if close and abs(p.x0 - value.x0) < value.h and (p.text[:1].islower() or p.text[:1] == "("):
            return True
    return False
