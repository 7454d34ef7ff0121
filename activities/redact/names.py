"""People's names: beside a label, after a title, and in prose by the given-name lexicon.

Four rules, each a name's shape in a line's words:

- **Labelled.** The words after "Patient:", "Patient name", "Name:", "Surname"
  (or under it, in a grid) that look like a name: one to four capitalised words.
- **Titled.** A title (Dr, Mr, Mrs, Ms, Miss, Prof) and the capitalised words after it.
- **In prose.** A given name of the lexicon (``activities.redact.lexicon``)
  followed by one or two capitalised words ("... seen with Peter Morgan today"),
  or a capitalised word, a comma and a given name ("Morgan, Peter").
- **In a name's slot** (``activities.redact.slots``): whatever capitalised words
  stand after a title, a person's label, a sign-off or a salutation, or before
  credentials, common words or not ("Clinician: Grant Field", "Regards, Page").

Each hit's strings are the name and each of its words but titles, so the
sweep and the check look for a surname printed alone elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from activities.redact.lexicon import GIVEN_NAMES
from activities.redact.lines import Line
from activities.redact.slots import slotted

_TITLES = frozenset({"dr", "mr", "mrs", "ms", "miss", "prof"})
_WORD = r"[A-Z][A-Za-z'’-]+"
TITLED = re.compile(rf"\b(?:Dr|Mr|Mrs|Ms|Miss|Prof)\.?\s+{_WORD}(?:\s+{_WORD}){{0,2}}")
#: A label for a person's name: what follows it (or stands under it) is the name.
LABEL = re.compile(
    r"patient(?:'s)?\s*(?:full\s*)?name|\bpatient\s*:|participant\s*name|\bre\s*:"
    r"|\b(?:sur|fore|first|last|given|full)\s*name|\bname\s*:",
    re.I,
)
#: One to four capitalised words, a comma allowed after one ("Morgan, Peter").
VALUE = re.compile(rf"{_WORD},?(?:\s+{_WORD}\.?,?){{0,3}}")
#: Capitalised words that start or end no name: places, organisations and form words.
_NOT_NAMES = frozenset(
    {
        "street",
        "road",
        "avenue",
        "lane",
        "drive",
        "clinic",
        "hospital",
        "medical",
        "centre",
        "center",
        "health",
        "practice",
        "group",
        "family",
        "community",
        "referral",
        "patient",
        "participant",
        "date",
        "birth",
        "reason",
        "consent",
        "yes",
        "no",
        "the",
        "and",
        "of",
        "for",
        "to",
        "from",
        "at",
        "in",
        "on",
        "with",
        "by",
        "dear",
        "yours",
        "sincerely",
        "regards",
        "mrn",
        "dob",
        "id",
        "number",
    }
)


def names(lines: Sequence[Line]) -> Iterator[tuple[Line, int, int]]:
    """Each titled, lexicon or slotted name in ``lines``: its phrase and the span in the
    phrase's text."""
    for phrase in (part for line in lines for part in line.phrases()):
        for match in TITLED.finditer(phrase.text):
            yield phrase, match.start(), match.end()
        yield from ((phrase, a, b) for a, b in _prose(phrase.text))
    yield from slotted(lines)


def name_parts(name: str) -> tuple[str, ...]:
    """A name and each of its words but titles: each is a string the check looks for."""
    parts = [p.strip(".,") for p in name.split()]
    return (name, *(p for p in parts if len(p) >= 3 and p.lower() not in _TITLES))


def looks_like_name(text: str) -> bool:
    """Capitalised words none of which is a form word: what a label's value must be."""
    words = [w.strip(",.").lower() for w in text.split()]
    return bool(VALUE.fullmatch(text)) and not any(w in _NOT_NAMES for w in words)


def _prose(text: str) -> Iterator[tuple[int, int]]:
    words = list(re.finditer(r"[A-Za-z][A-Za-z'’-]*,?", text))
    for i, word in enumerate(words):
        if word.group().lower().strip(",") not in GIVEN_NAMES or not _capital(word.group()):
            continue
        after = _run(words[i + 1 : i + 3])
        if after and not word.group().endswith(","):
            yield word.start(), after[-1].end()
        elif i > 0 and words[i - 1].group().endswith(",") and _surname(words[i - 1].group()):
            yield words[i - 1].start(), word.end()


def _run(words: Sequence[re.Match[str]]) -> list[re.Match[str]]:
    """The capitalised words that follow a given name, stopping at a comma or a form word."""
    run = []
    for word in words:
        if not _surname(word.group()):
            break
        run.append(word)
        if word.group().endswith(","):
            break
    return run


def _surname(word: str) -> bool:
    bare = word.strip(",")
    return _capital(bare) and len(bare) >= 2 and bare.lower() not in _NOT_NAMES


def _capital(word: str) -> bool:
    return word[:1].isupper()
