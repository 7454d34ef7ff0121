"""OCR words as rectangles grouped into lines: what the detectors read.

A line is the words whose vertical centres lie within half a word's height of
each other, left to right, once the page's skew is taken out: on a scan turned
by 3 degrees a value 600 px right of its label sits 30 px higher, so centres
are compared along the text's own slope (the median slope of the OCR words'
top edges; zero for engines that give upright boxes). Each line also has its
text (words joined by one space) with each word's character span, so a
pattern found in the text maps back to the words it covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from activities.pages.wordbox import rect, top_edge_slope
from custody.models import PageText, Word

_PHRASE_GAP = 1.5  # word heights between two phrases of one line
_MAX_SLOPE = 0.15  # about 8.5 degrees: beyond it a page is turned, not skewed


@dataclass(frozen=True)
class Tok:
    page: int
    index: int  # the word's index in its page's ``words``
    text: str
    x0: int
    y0: int
    x1: int
    y1: int
    #: The vertical centre with the page's skew taken out: what groups words into lines.
    level: float = 0.0

    @property
    def height(self) -> int:
        return max(1, self.y1 - self.y0)


@dataclass(frozen=True)
class Line:
    toks: tuple[Tok, ...]

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.toks)

    def spans(self) -> list[tuple[int, int]]:
        """Each word's (start, end) in :attr:`text`."""
        spans, at = [], 0
        for tok in self.toks:
            spans.append((at, at + len(tok.text)))
            at += len(tok.text) + 1
        return spans

    def phrases(self) -> list[Line]:
        """The line cut where words stand apart (a grid's neighbouring cells, a form's columns)."""
        runs: list[list[Tok]] = []
        for tok in self.toks:
            if runs and tok.x0 - runs[-1][-1].x1 <= _PHRASE_GAP * tok.height:
                runs[-1].append(tok)
            else:
                runs.append([tok])
        return [Line(tuple(run)) for run in runs]

    def covering(self, start: int, end: int) -> tuple[Tok, ...]:
        return tuple(
            t for t, (a, b) in zip(self.toks, self.spans(), strict=True) if a < end and b > start
        )


def page_lines(page: PageText) -> list[Line]:
    slope = _slope(page.words)
    toks = []
    for i, word in enumerate(page.words):
        x0, y0, x1, y1 = rect(word)
        level = (y0 + y1) / 2 - slope * (x0 + x1) / 2
        if word.text.strip():
            toks.append(Tok(page.page, i, word.text.strip(), x0, y0, x1, y1, level))
    toks.sort(key=lambda t: t.level)
    rows: list[list[Tok]] = []
    for tok in toks:
        if rows and abs(tok.level - _level(rows[-1])) <= 0.5 * max(tok.height, rows[-1][0].height):
            rows[-1].append(tok)
        else:
            rows.append([tok])
    return [Line(tuple(sorted(row, key=lambda t: t.x0))) for row in rows]


def all_lines(pages: Sequence[PageText]) -> list[Line]:
    return [line for page in pages for line in page_lines(page)]


def _level(row: list[Tok]) -> float:
    return sum(t.level for t in row) / len(row)


def _slope(words: Sequence[Word]) -> float:
    """The page's slope from words at least twice as wide as tall, within +-_MAX_SLOPE."""
    return top_edge_slope(words, _twice_the_height, _MAX_SLOPE)


def _twice_the_height(word: Word) -> float:
    _, y0, _, y1 = rect(word)
    return 2 * max(1, y1 - y0)
