"""OCR words as boxes on lines: the geometry every field reader works from.

Words come with a four-point box; here each becomes an upright ``Token``
(its bounding rectangle) and tokens whose vertical centres share a band
become a ``Line``, left to right. Heights are compared with the page's skew
taken out (measured from the words' own tilted boxes), so a skewed scan's
line stays one line however far its value sits from its label.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from activities.pages.wordbox import rect, top_edge_slope
from custody.models import PageText, Word


@dataclass(frozen=True)
class Token:
    text: str
    confidence: float
    page: int
    x0: int
    y0: int
    x1: int
    y1: int
    #: The centre's height with the page's skew taken out: words of one line share it.
    level: float = 0.0

    @property
    def height(self) -> int:
        return max(1, self.y1 - self.y0)

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    def box(self) -> list[int]:
        return [self.x0, self.y0, self.x1, self.y1]


@dataclass
class Line:
    page: int
    tokens: list[Token] = field(default_factory=list)

    @property
    def cy(self) -> float:
        return sum(t.cy for t in self.tokens) / len(self.tokens)

    @property
    def height(self) -> float:
        return sum(t.height for t in self.tokens) / len(self.tokens)


def token(word: Word, page: int) -> Token:
    return Token(word.text, word.confidence, page, *rect(word))


def page_lines(page: PageText) -> list[Line]:
    """The page's tokens grouped into lines, top to bottom, each left to right.

    Each word joins the line whose last word it follows at about the same
    height, so a skewed scan's line, which drifts down across the page,
    stays one line.
    """
    words = [w for w in page.words if w.text.strip()]
    slope = _skew(words)
    parts = (part for w in words for part in _split_label(token(w, page.page)))
    levelled = (replace(t, level=t.cy - slope * (t.x0 + t.x1) / 2) for t in parts)
    tokens = sorted(levelled, key=lambda t: (t.x0, t.level))
    lines: list[Line] = []
    for tok in tokens:
        home = _home(lines, tok)
        if home is None:
            lines.append(Line(page.page, [tok]))
        else:
            home.tokens.append(tok)
    lines.sort(key=lambda line: line.cy)
    return lines


def _skew(words: list[Word]) -> float:
    """The page's skew as a slope (dy/dx): the median of its long words' top edges.

    A skewed scan's label and its value, far right, can sit a line apart in
    plain height; levelled by this slope they share a line again.
    """
    return top_edge_slope(words, lambda _: 40)


def _split_label(tok: Token) -> list[Token]:
    """``Date:14/03/2026`` read as one word becomes the label and the value."""
    head, colon, tail = tok.text.partition(":")
    if not colon or not any(c.isalpha() for c in head) or not tail.strip():
        return [tok]
    cut = tok.x0 + (tok.x1 - tok.x0) * (len(head) + 1) // len(tok.text)
    return [
        Token(head + colon, tok.confidence, tok.page, tok.x0, tok.y0, cut, tok.y1),
        Token(tail.strip(), tok.confidence, tok.page, cut, tok.y0, tok.x1, tok.y1),
    ]


def _home(lines: list[Line], tok: Token) -> Line | None:
    best: tuple[float, Line] | None = None
    for line in lines:
        last = line.tokens[-1]
        drift = abs(last.level - tok.level)
        if drift > 0.5 * max(last.height, tok.height) or _overlaps(last, tok):
            continue
        # Of the lines at this height, the one whose last word is nearest: a
        # skewed line's end sits as high as the start of the line above it.
        cost = drift + 0.1 * max(0, tok.x0 - last.x1)
        if best is None or cost < best[0]:
            best = (cost, line)
    return best[1] if best else None


def _overlaps(a: Token, b: Token) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 * min(a.x1 - a.x0, b.x1 - b.x0)


def joined(tokens: list[Token]) -> str:
    return " ".join(t.text for t in tokens).strip()


def span(tokens: list[Token]) -> list[int]:
    """The rectangle around ``tokens``: [x0, y0, x1, y1]."""
    return [
        min(t.x0 for t in tokens),
        min(t.y0 for t in tokens),
        max(t.x1 for t in tokens),
        max(t.y1 for t in tokens),
    ]


#: Words rubber stamps carry; a stamp's frame and ink overprint the words around it.
STAMP_WORDS = ("received", "approved", "paid", "copy", "filed", "urgent", "confidential")


def stamps(lines: list[Line]) -> list[Token]:
    """Words that look like a rubber stamp's: a stamp word alone in capitals."""
    from activities.fields.normalise import edit_distance

    found = []
    for line in lines:
        for tok in line.tokens:
            word = tok.text.strip(".:!").lower()
            shouted = tok.text.strip(".:!").isupper() or tok.confidence < 0.9
            if shouted and any(
                edit_distance(word, s) <= (2 if len(s) >= 6 else 0) for s in STAMP_WORDS
            ):
                found.append(tok)
    return found


def near(tokens: tuple[Token, ...] | list[Token], marks: list[Token]) -> bool:
    """Whether any of ``tokens`` lies under a stamp: its word, the date line below it, its frame.

    A stamp prints a date of about eleven letters under its word, inside a
    frame half a letter out: the stamp reaches that far right and one line down.
    """
    for mark in marks:
        h, letter = mark.height, (mark.x1 - mark.x0) / max(1, len(mark.text))
        x0, y0 = mark.x0 - h / 2, mark.y0 - h / 2
        x1, y1 = mark.x0 + max(mark.x1 - mark.x0, 11 * letter) + h / 2, mark.y1 + 1.5 * h
        for tok in tokens:
            if (
                tok.page == mark.page
                and tok.x0 < x1
                and x0 < tok.x1
                and tok.y0 < y1
                and y0 < tok.y1
            ):
                return True
    return False
