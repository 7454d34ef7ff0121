"""Pages of words laid out by hand, for the tests of what reads them (the field readers,
the page layout): 30 px high, 20 px a letter unless told."""

from __future__ import annotations

from custody.models import Mark, PageText, Word

#: One row of a page: each word and the x it starts at.
Row = list[tuple[str, int]]


def placed(
    rows: list[Row],
    *,
    dy: int = 80,
    conf: float = 0.99,
    marks: list[Mark] | None = None,
    letter: int = 20,
) -> PageText:
    """Row ``n`` at y = 100 + dy*n, each word at its given x, ``letter`` px a letter wide."""
    words = []
    for n, row in enumerate(rows):
        y = 100 + dy * n
        for text, x in row:
            w = letter * len(text)
            box = [[x, y], [x + w, y], [x + w, y + 30], [x, y + 30]]
            words.append(Word(text=text, confidence=conf, box=box))
    return PageText(
        page=0,
        width=1700,
        height=2200,
        text="",
        words=words,
        mean_confidence=conf,
        seconds=0.0,
        marks=marks or [],
    )


def row_of(sentence: str, x: int, *, letter: int = 20, space: int = 20) -> Row:
    """The sentence's words from ``x`` on, ``letter`` px a letter, ``space`` px between."""
    row = []
    for word in sentence.split():
        row.append((word, x))
        x += letter * len(word) + space
    return row


def flowing(rows: list[str], marks: list[Mark] | None = None, conf: float = 0.99) -> PageText:
    """Row ``n`` at y = 100 + 80n from x = 160, one space (20 px) between words."""
    return placed([row_of(row, 160) for row in rows], conf=conf, marks=marks)
