"""Field extraction: typed fields read from a document's OCR words (issue #15).

``extract`` is pure: OCR pages in, an ``Extraction`` out, no I/O, the same
answer every time. It classifies the document (or takes the declared or the
policy's type), then reads that type's fields beside their labels (see
``anchors``), each with its page, box, confidence and method; a field read
too unsurely needs review and carries no value. A configured type
(``custody.doctypes``) is read by the one generic reader (``configured``);
a generic form gets its key-value pairs (``form``). Values never leave the
returned object: nothing here logs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from activities.fields.classify import classify
from activities.fields.configured import read_configured
from activities.fields.form import read_pairs
from activities.fields.layout import Line, page_lines
from activities.fields.receipt import read_receipt
from activities.fields.referral import BARS, read_referral
from custody.doctypes import TypeSpec
from custody.fields import DocType, Extraction, FoundField
from custody.models import PageText

__all__ = ["extract", "unbarred"]


def extract(
    pages: list[PageText],
    *,
    declared: str | None = None,
    expected: Sequence[str] = (),
    configured: Mapping[str, TypeSpec] | None = None,
) -> Extraction:
    """The document's type and fields, read from its OCR pages.

    ``configured``: the types the tenant's policy configures, by name (shipped ones included).
    """
    ordered = sorted(pages, key=lambda p: p.page)
    lines: list[Line] = [line for page in ordered for line in page_lines(page)]
    types = configured or {}
    kind = classify(lines, declared=declared, expected=expected, configured=types)
    marks = {page.page: page.marks for page in ordered}
    if kind.type == DocType.REFERRAL:
        return Extraction(classification=kind, fields=read_referral(ordered, lines))
    if kind.type == DocType.RECEIPT:
        return Extraction(classification=kind, fields=read_receipt(lines))
    if kind.type in types:
        fields = read_configured(types[kind.type], lines, marks)
        return Extraction(classification=kind, fields=fields)
    return Extraction(classification=kind, pairs=read_pairs(lines, marks))


def unbarred(pages: list[PageText]) -> dict[str, FoundField]:
    """A referral's fields as read before their bars: each reading's value and confidence.

    Not for publishing: ``custody bench fields`` measures from these how often a
    reading is wrong per confidence band, which is what the bars are set from.
    """
    ordered = sorted(pages, key=lambda p: p.page)
    lines = [line for page in ordered for line in page_lines(page)]
    return read_referral(ordered, lines, dict.fromkeys(BARS, 0.0))
