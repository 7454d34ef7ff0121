"""One model of a page's words and lines: what published text, fields and redaction all read.

Until issue #27 three readers grouped OCR words into lines by three rules,
so a discharge line "Allergies: penicillin - none known; latex - rash" was
published as two interleaved lines while the field reader saw it whole. Here
it is done once:

- **Rows.** Each word's centre height is taken with the page's skew removed
  (the median slope of long words' top edges, within +-0.15), and a word
  joins the row whose last word it follows at about that height, closer
  than half the smaller of the two heights (never less than ``_SMALL`` of
  the page's body height, so "1" still joins "Page"). Marks (punctuation
  alone: a dash, a comma) have no useful centre: they join the row whose
  band holds them afterwards, so a dash cannot start a line of its own.
- **Columns.** A vertical gutter at least ``_GUTTER`` body heights wide
  that no word crosses over ``_MIN_ROWS`` or more rows, with prose (lines of
  ``_PROSE`` words or more) on both sides, splits those rows into a left and
  a right column, read one after the other. A label list beside its values
  is not prose, so its rows stay whole and a label keeps its value.
- **Lines.** One row of one column, left to right. ``phrases`` cuts a line
  where its words stand apart (a grid's neighbouring cells).

Published text is the lines in this order, one per text line.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from activities.pages.columns import blocks
from activities.pages.wordbox import rect, top_edge_slope
from custody.models import PageText, Word

_MAX_SLOPE = 0.15  # about 8.5 degrees: beyond it a page is turned, not skewed
_SMALL = 0.6  # the least a word counts as high, as a share of the body height
_GUTTER = 2.0  # body heights: the narrowest gap between two columns
_PROSE = 4  # median words per line on each side for a gutter to split columns
_MIN_ROWS = 3  # rows on each side of a gutter, at least
_PHRASE_GAP = 1.5  # word heights between two phrases of one line


@dataclass(frozen=True)
class Token:
    """One OCR word as its upright rectangle, with where it sits in the page's words."""

    text: str
    confidence: float
    page: int
    x0: int
    y0: int
    x1: int
    y1: int
    #: The centre's height with the page's skew taken out: words of one row share it.
    level: float = 0.0
    #: The word's index in its page's ``words`` (-1: not from a page's words).
    index: int = -1

    @property
    def height(self) -> int:
        return max(1, self.y1 - self.y0)

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    def box(self) -> list[int]:
        return [self.x0, self.y0, self.x1, self.y1]


@dataclass(frozen=True)
class Line:
    """One row of one column, its words left to right."""

    page: int
    tokens: tuple[Token, ...]
    #: The page's skew (dy/dx) the line was levelled with: its baseline runs along it.
    slope: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)

    @property
    def cy(self) -> float:
        return sum(t.cy for t in self.tokens) / len(self.tokens)

    @property
    def height(self) -> float:
        return sum(t.height for t in self.tokens) / len(self.tokens)

    def baseline(self, x: float) -> float:
        """Where the line's baseline is at ``x``: its words' median bottom, along the skew."""
        words = [t for t in self.tokens if not _mark(t)] or list(self.tokens)
        bottom = statistics.median(t.y1 - self.slope * (t.x0 + t.x1) / 2 for t in words)
        return bottom + self.slope * x

    def spans(self) -> list[tuple[int, int]]:
        """Each word's (start, end) in :attr:`text`."""
        spans, at = [], 0
        for tok in self.tokens:
            spans.append((at, at + len(tok.text)))
            at += len(tok.text) + 1
        return spans

    def covering(self, start: int, end: int) -> tuple[Token, ...]:
        """The words that characters ``start:end`` of :attr:`text` fall in."""
        return tuple(
            t for t, (a, b) in zip(self.tokens, self.spans(), strict=True) if a < end and b > start
        )

    def phrases(self, gap: float = _PHRASE_GAP) -> list[Line]:
        """The line cut where words stand further apart than ``gap`` word heights."""
        runs: list[list[Token]] = []
        for tok in self.tokens:
            if runs and tok.x0 - runs[-1][-1].x1 <= gap * tok.height:
                runs[-1].append(tok)
            else:
                runs.append([tok])
        return [Line(self.page, tuple(run), self.slope) for run in runs]


def page_lines(page: PageText) -> list[Line]:
    """The page's lines in reading order: rows top to bottom, a prose column at a time."""
    return _lines(page.words, page.page)


def document_lines(pages: Sequence[PageText]) -> list[Line]:
    """Every page's lines, page after page."""
    return [line for page in sorted(pages, key=lambda p: p.page) for line in page_lines(page)]


def reading_text(words: Sequence[Word]) -> str:
    """What a page publishes as its text: its lines in reading order, one per text line."""
    return "\n".join(line.text for line in _lines(words, 0))


def _lines(words: Sequence[Word], page: int) -> list[Line]:
    slope = top_edge_slope(words, _twice_the_height, _MAX_SLOPE)
    tokens = _tokens(words, page, slope)
    if not tokens:
        return []
    body = _body_height(tokens)
    rows = blocks(_rows(tokens, body), body, _GUTTER, _PROSE, _MIN_ROWS)
    return [Line(page, tuple(row), slope) for row in rows]


def _tokens(words: Sequence[Word], page: int, slope: float) -> list[Token]:
    found = []
    for i, word in enumerate(words):
        text = word.text.strip()
        if text:
            x0, y0, x1, y1 = rect(word)
            level = (y0 + y1) / 2 - slope * (x0 + x1) / 2
            found.append(Token(text, word.confidence, page, x0, y0, x1, y1, level, i))
    return found


def _twice_the_height(word: Word) -> float:
    _, y0, _, y1 = rect(word)
    return 2 * max(1, y1 - y0)


def _body_height(tokens: Sequence[Token]) -> float:
    """The median height of the words (not the marks): a line's height."""
    words = [t.height for t in tokens if not _mark(t)]
    return float(statistics.median(words or [t.height for t in tokens]))


def _mark(tok: Token) -> bool:
    """Punctuation alone ("-", ",", "."): its box says little of where its line is."""
    return not any(c.isalnum() for c in tok.text)


def _rows(tokens: Sequence[Token], body: float) -> list[list[Token]]:
    """Words into rows, left to right; then the marks into the bands they sit in."""
    floor = _SMALL * body
    rows: list[list[Token]] = []
    for tok in sorted((t for t in tokens if not _mark(t)), key=lambda t: (t.x0, t.level)):
        home = _home(rows, tok, floor)
        if home is None:
            rows.append([tok])
        else:
            home.append(tok)
    for tok in (t for t in tokens if _mark(t)):
        band = _band(rows, tok)
        if band is None:
            rows.append([tok])
        else:
            band.append(tok)
            band.sort(key=lambda t: t.x0)
    rows.sort(key=lambda row: statistics.median(t.level for t in row))
    return rows


def _home(rows: list[list[Token]], tok: Token, floor: float) -> list[Token] | None:
    """The row whose last word ``tok`` follows at its height, the nearest if several."""
    best: tuple[float, list[Token]] | None = None
    for row in rows:
        last = row[-1]
        drift = abs(last.level - tok.level)
        if drift > 0.5 * max(floor, min(last.height, tok.height)) or _stacked(last, tok):
            continue
        # A skewed row's end sits as high as the start of the row above it: the nearest wins.
        cost = drift + 0.1 * max(0, tok.x0 - last.x1)
        if best is None or cost < best[0]:
            best = (cost, row)
    return best[1] if best else None


def _stacked(a: Token, b: Token) -> bool:
    """Two words one above the other (most of the narrower's width shared): two rows."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 * min(a.x1 - a.x0, b.x1 - b.x0)


def _band(rows: list[list[Token]], tok: Token) -> list[Token] | None:
    """The row whose words' band holds the mark's centre, nearest across the page."""
    best: tuple[float, list[Token]] | None = None
    for row in rows:
        top = statistics.median(t.level - t.height / 2 for t in row)
        bottom = statistics.median(t.level + t.height / 2 for t in row)
        if not top <= tok.level <= bottom:
            continue
        reach = min(abs(tok.x0 - t.x1) if tok.x0 >= t.x1 else abs(t.x0 - tok.x1) for t in row)
        if best is None or reach < best[0]:
            best = (reach, row)
    return best[1] if best else None
