"""OCR words as rectangles grouped into lines: what the detectors read.

The lines are the page's one layout model (``activities.pages.layout``), the
same lines the field readers and the published text see: a value the
extraction found beside its label is on the line the detectors search, and
the text of a redacted view reads in the order the original did. Each line
has its text (words joined by one space) with each word's character span, so
a pattern found in the text maps back to the words it covers.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.pages.layout import Line, page_lines
from activities.pages.layout import Token as Tok
from custody.models import PageText

__all__ = ["Line", "Tok", "all_lines", "page_lines"]


def all_lines(pages: Sequence[PageText]) -> list[Line]:
    """Every page's lines, in the order the pages are given."""
    return [line for page in pages for line in page_lines(page)]
