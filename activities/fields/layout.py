"""OCR words as boxes on lines, as the field readers use them.

The words and lines are the page's one layout model
(``activities.pages.layout``): the lines published text and redaction see,
skew taken out, prose columns read in turn. The one thing fields add is
``_split_label``: "Date:14/03/2026" read as one word becomes the label and
its value, so the label can anchor the value beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from activities.pages.layout import Line, Token
from activities.pages.layout import page_lines as _layout_lines
from custody.models import PageText

__all__ = ["Line", "Token", "joined", "near", "page_lines", "span", "stamps"]


def page_lines(page: PageText) -> list[Line]:
    """The page's lines in reading order, a label run into its value split from it."""
    return [
        replace(line, tokens=tuple(part for tok in line.tokens for part in _split_label(tok)))
        for line in _layout_lines(page)
    ]


def _split_label(tok: Token) -> list[Token]:
    """``Date:14/03/2026`` read as one word becomes the label and the value."""
    head, colon, tail = tok.text.partition(":")
    if not colon or not any(c.isalpha() for c in head) or not tail.strip():
        return [tok]
    cut = tok.x0 + (tok.x1 - tok.x0) * (len(head) + 1) // len(tok.text)
    return [replace(tok, text=head + colon, x1=cut), replace(tok, text=tail.strip(), x0=cut)]


def joined(tokens: Sequence[Token]) -> str:
    return " ".join(t.text for t in tokens).strip()


def span(tokens: Sequence[Token]) -> list[int]:
    """The rectangle around ``tokens``: [x0, y0, x1, y1]."""
    return [
        min(t.x0 for t in tokens),
        min(t.y0 for t in tokens),
        max(t.x1 for t in tokens),
        max(t.y1 for t in tokens),
    ]


#: Words rubber stamps carry; a stamp's frame and ink overprint the words around it.
STAMP_WORDS = ("received", "approved", "paid", "copy", "filed", "urgent", "confidential")


def stamps(lines: Sequence[Line]) -> list[Token]:
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


def near(tokens: Sequence[Token], marks: Sequence[Token]) -> bool:
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
