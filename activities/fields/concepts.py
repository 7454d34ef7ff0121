"""Labels no list knows, found by what they are about: "Question for research team",
"What we are asking", "Main clinical concern".

A referral's reason is printed under more wordings than any list holds. Where no
listed label names it, a short phrase that opens its line, stands apart from what
follows (a wide gap, or the end of its line) and is headed by a word that only a
reason's label uses (``HEADS``) is taken for its label, a little less sure than a
listed one (``SCORE``); a value beside it must stand well apart and not open in
lower case ("Problem  in brief" is a label spaced out by a hand). A phrase with a
figure in it, a question mark, or a word of another section (``OTHER``: history,
medication, allergies ...) is no such label: a wrong value beside a plausible label
would be published as surely as a right one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from activities.fields.anchors import Anchor
from activities.fields.layout import Line, Token

#: Words that head a reason's label, and only a reason's.
HEADS = frozenset(
    ("reason", "reasons", "concern", "concerns", "complaint", "question", "query", "asking")
    + ("asked", "indication", "problem", "issue", "issues", "why")
)
#: Words of another section's label: a phrase holding one is not the reason's.
OTHER = frozenset(
    ("past", "previous", "family", "social", "drug", "drugs", "medication", "medications")
    + ("allergy", "allergies", "other", "history", "date", "number", "no", "id", "list")
    + ("consent", "contact", "phone", "address", "name", "interpreter", "transport", "any")
)
#: How sure a label found by its head word is, against 1.0 for a listed wording read
#: as printed: below it, so a listed label on the page is preferred.
SCORE = 0.97
_MAX_WORDS = 6
_GAP = 2.0  # word heights: a phrase further than this from the next word stands apart
_VALUE_GAP = 3.0  # word heights: a value beside such a label stands this far from it at least


def reason_anchors(lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Anchor]:
    """Phrases that label a reason by their head word, on lines no label starts."""
    labelled = {a.line for a in anchors if a.start == 0}
    found = []
    for n, line in enumerate(lines):
        if n in labelled or not line.tokens:
            continue
        phrase = line.phrases(_GAP)[0]
        words = [re.sub(r"[^a-z]", "", t.text.lower()) for t in phrase.tokens]
        if not 1 <= len(words) <= _MAX_WORDS or not set(words) & HEADS or set(words) & OTHER:
            continue
        if any(c.isdigit() or c == "?" for t in phrase.tokens for c in t.text):
            continue
        if not _headed(words, phrase, line):
            continue
        end = len(phrase.tokens)
        if end < len(line.tokens) and not _apart(phrase, line.tokens[end]):
            continue
        found.append(Anchor("reason", n, 0, end, SCORE, tuple(phrase.tokens), phrase.text))
    return found


def _apart(phrase: Line, value: Token) -> bool:
    """Whether the words after the phrase stand apart as its value: far from it, starting
    as a value starts ("Problem  in brief" is a label a hand spaced out, not a value)."""
    gap = value.x0 - phrase.tokens[-1].x1
    return gap >= _VALUE_GAP * phrase.height and not value.text[:1].islower()


def _headed(words: Sequence[str], phrase: Line, line: Line) -> bool:
    """Whether the phrase ends in its head word (or a colon), or, where the head leads
    ("Question for research team"), its value follows it on its line; a line that is
    one phrase led by its head ("Problem list reviewed") is a sentence."""
    if words[-1] in HEADS or phrase.tokens[-1].text.endswith(":"):
        return True
    return len(phrase.tokens) < len(line.tokens) and words[0] in HEADS | {"what", "main"}
