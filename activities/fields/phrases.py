"""A form's words as phrases: the units a key or a value is made of, and who is next to whom.

A line (``activities.fields.layout``) holds everything at one height, but a
form's line is often a label, a gap, a value, a gap, another label. A line is
cut into phrases where the gap between two words is wider than a few letters
of the words beside it (letters, not heights: a typewriter's space is as wide
as its letters, a proportional font's much narrower), where two numbers sit
apart (a table's cells), and after a word ending in a colon (a label ends
there). ``Sheet`` answers the questions the linkers ask: the phrase right of
this one, the phrases above it in its column, the ones aligned with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from activities.fields.layout import Line, Token, joined

#: A gap wider than this many letters ends a phrase.
WORD_GAP = 2.0
#: Two numbers further apart than one letter are two cells.
CELL_GAP = 1.0
_NUMBER_TRIM = re.compile(r"[\s$%*+().,#/-]")


@dataclass(frozen=True)
class Phrase:
    tokens: tuple[Token, ...]
    #: The index of its line in the document, and its place on that line.
    line: int
    pos: int

    @cached_property
    def text(self) -> str:
        return joined(list(self.tokens))

    @property
    def page(self) -> int:
        return self.tokens[0].page

    @property
    def x0(self) -> int:
        return self.tokens[0].x0

    @property
    def x1(self) -> int:
        return self.tokens[-1].x1

    @cached_property
    def y0(self) -> int:
        return min(t.y0 for t in self.tokens)

    @cached_property
    def y1(self) -> int:
        return max(t.y1 for t in self.tokens)

    @cached_property
    def h(self) -> int:
        """The median word height: one tall stray word does not stretch it."""
        return sorted(t.height for t in self.tokens)[len(self.tokens) // 2]

    @cached_property
    def numeric(self) -> bool:
        """Mostly digits once currency, signs and separators are set aside: a table cell."""
        bare = _NUMBER_TRIM.sub("", self.text)
        return bool(bare) and sum(c.isdigit() for c in bare) >= 0.6 * len(bare)

    @cached_property
    def wordy(self) -> bool:
        """Mostly letters: a label or a header can be this, a cell cannot."""
        bare = "".join(self.text.split())
        return not self.numeric and sum(c.isalpha() for c in bare) >= 0.6 * len(bare)

    @property
    def colon(self) -> bool:
        """Ends in a colon after at least two letters: printed as a label."""
        return self.text.endswith(":") and sum(c.isalpha() for c in self.text) >= 2

    @property
    def confidence(self) -> float:
        return min(t.confidence for t in self.tokens)

    def overlaps(self, other: Phrase) -> bool:
        """Whether the two share some of their width: one stands over the other."""
        return min(self.x1, other.x1) > max(self.x0, other.x0)


def phrases(lines: Sequence[Line]) -> list[Phrase]:
    """Every line's phrases, lines in order, each line's left to right."""
    found: list[Phrase] = []
    for n, line in enumerate(lines):
        runs: list[list[Token]] = []
        for tok in line.tokens:
            if runs and not _apart(runs[-1], tok):
                runs[-1].append(tok)
            else:
                runs.append([tok])
        found.extend(Phrase(tuple(run), n, i) for i, run in enumerate(runs))
    return found


def _apart(run: list[Token], tok: Token) -> bool:
    last = run[-1]
    if last.text.endswith(":"):
        return True
    letters = sum(len(t.text) for t in (*run, tok))
    letter = max(3.0, sum(t.x1 - t.x0 for t in (*run, tok)) / letters)
    cells = _is_number(last.text) and _is_number(tok.text)
    return tok.x0 - last.x1 > (CELL_GAP if cells else WORD_GAP) * letter


def _is_number(text: str) -> bool:
    bare = text.strip("()$%*+-.,#")
    return bool(bare) and sum(c.isdigit() for c in bare) >= 0.6 * len(bare)


class Sheet:
    """A page's phrases and their neighbours (one page: phrases of other pages never meet)."""

    def __init__(self, found: Sequence[Phrase]) -> None:
        self.phrases = list(found)
        self._rows: dict[int, list[Phrase]] = {}
        for phrase in self.phrases:
            self._rows.setdefault(phrase.line, []).append(phrase)

    def row(self, phrase: Phrase) -> list[Phrase]:
        return self._rows[phrase.line]

    def right(self, phrase: Phrase) -> Phrase | None:
        row = self._rows[phrase.line]
        return row[phrase.pos + 1] if phrase.pos + 1 < len(row) else None

    def above(self, phrase: Phrase, reach: float) -> list[Phrase]:
        """Phrases over ``phrase`` sharing its width, nearest first, within ``reach`` heights."""
        over = [
            p
            for p in self.phrases
            if p.line < phrase.line and p.overlaps(phrase) and phrase.y0 - p.y1 < reach * phrase.h
        ]
        return sorted(over, key=lambda p: -p.line)

    def aligned(self, phrase: Phrase, within: int) -> list[Phrase]:
        """Other phrases starting where ``phrase`` starts, on lines up to ``within`` away."""
        return [
            p
            for p in self.phrases
            if p is not phrase
            and abs(p.x0 - phrase.x0) < 0.6 * phrase.h
            and abs(p.line - phrase.line) <= within
        ]


@dataclass(frozen=True)
class Proposal:
    """A pair a linker sees: the key phrase, the value's phrases, and how it was found.

    ``shown`` and ``box`` stand for a value that is no phrase (a ticked box the
    engine read no word for); ``vertical``: the key stands above the value.
    """

    key: Phrase
    value: tuple[Phrase, ...]
    method: str
    vertical: bool = False
    shown: str | None = None
    box: list[int] | None = None


def sheets(found: Sequence[Phrase]) -> list[Sheet]:
    """One ``Sheet`` per page, in page order."""
    pages: dict[int, list[Phrase]] = {}
    for phrase in found:
        pages.setdefault(phrase.page, []).append(phrase)
    return [Sheet(pages[n]) for n in sorted(pages)]
