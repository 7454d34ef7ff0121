"""Receipt fields (SROIE): company, date, address, total.

The company is the head's line with a legal suffix (SDN BHD, TRADING), else
its first line of words; the address is the lines under it, registration
numbers skipped, down to the postcode line and a state after it (SROIE's
receipts are Malaysian: five-digit postcodes, the states listed below), and
stops at a telephone, tax or date line. The date is the one on a line with
a date label, else the receipt's dates, which must agree. The total is the
amount beside the best total label (grand, rounded or nett before a plain
total; never a subtotal, a tax total, the cash or the change), the largest
when several labels rank alike. A name or an address has no grammar to
check it, so OCR's visible slips ("J1n") make it review rather than a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from activities.fields.anchors import Anchor, find_anchors
from activities.fields.choose import Reading, decide, ocr_confidence
from activities.fields.labels import RECEIPT_LABELS
from activities.fields.layout import Line, Token, joined
from activities.fields.normalise import amounts_in, dates_in, plain_text
from custody.fields import FoundField

BARS = {"company": 0.8, "date": 0.85, "address": 0.85, "total": 0.85}
_BUSINESS = re.compile(
    r"\b(SDN|BHD|BERHAD|ENTERPRISE|TRADING|RESTAURANTS?|SHOP|MARKET|STORE|STATIONERY|CO\.?|"
    r"HARDWARE|MART|CAFE|BAKERY|PHARMACY|KEDAI|SUPERMARKET|RESTORAN|LTD|PLT)\b",
    re.IGNORECASE,
)
#: Words that continue a shop's name on the next line ("POPULAR BOOK" / "CO. (M) SDN BHD").
_NAME_TAIL = re.compile(r"^(CO\.?|\(M\)|SDN|BHD|BERHAD|ENTERPRISE|TRADING)\b", re.IGNORECASE)
#: Lines that end the address: how to reach the shop, or the receipt itself starting.
_AFTER_ADDRESS = re.compile(
    r"\b(TEL|PHONE|MOBILE|FAX|INVOICE|RECEIPT|DATE|TIME|CASHIER|EMAIL|WEBSITE|WWW)\b|@",
    re.IGNORECASE,
)
#: Lines between the name and the address: registration numbers, former names.
_REGISTRATION = re.compile(
    r"\b(GST|ROC|SITE|FORMERLY|LICENSEE|OWNED|(COMPANY|CO|BR|REG)\.?\s*NO)\b|^\(.*\)$",
    re.IGNORECASE,
)
#: A legal entity's suffix: the line that carries it is the company's name.
_LEGAL = re.compile(r"\b(SDN\.?\s*BHD|BERHAD|ENTERPRISE|TRADING|PLT|LTD)\b", re.IGNORECASE)
#: Words OCR has visibly misread: a 1/0/5 between letters ("J1n"), a stray letter after a stop.
_MISREAD = re.compile(r"[A-Za-z][015][A-Za-z]|[A-Za-z]{3}\.[A-Z]$")
_POSTCODE = re.compile(r"\b\d{5}\b")
_STATES = re.compile(
    r"\b(SELANGOR|KUALA LUMPUR|MALAYSIA|JOHOR|PENANG|PULAU PINANG|PERAK|KEDAH|MELAKA|"
    r"NEGERI SEMBILAN|PAHANG|KELANTAN|TERENGGANU|SABAH|SARAWAK|PERLIS|PUTRAJAYA|LABUAN)\b",
    re.IGNORECASE,
)
_REG_NO = re.compile(r"\(\s*[A-Z0-9-]*\d[A-Z0-9-]*\s*\)")
#: Label words that make a total the payable one, best first.
_TOTAL_RANK = ("grand", "rounded", "nett", "net", "incl", "inclusive", "payable", "due")


def read_receipt(lines: Sequence[Line]) -> dict[str, FoundField]:
    name = _name_lines(lines)
    return {
        "company": _company(lines, name),
        "date": _date(lines),
        "address": _address(lines, name),
        "total": _total(lines),
    }


def _name_lines(lines: Sequence[Line]) -> list[int]:
    """The company's name: the head's line with a legal suffix (SDN BHD), else its first line.

    A name broken over two lines ("POPULAR BOOK" / "CO. (M) SDN BHD") is both.
    """
    head = [n for n in range(min(len(lines), 4)) if _is_words(joined(lines[n].tokens))]
    legal = [n for n in head if _LEGAL.search(joined(lines[n].tokens))]
    if not head:
        return []
    n = legal[0] if legal else head[0]
    if _NAME_TAIL.match(joined(lines[n].tokens)) and n - 1 in head:
        return [n - 1, n]
    if n + 1 < len(lines) and _NAME_TAIL.match(joined(lines[n + 1].tokens)):
        return [n, n + 1]
    return [n]


def _is_words(text: str) -> bool:
    # Not a stray mark, a number, or a heading that is not the name.
    return sum(c.isalpha() for c in text) >= 3 and not re.search(r"TAX INVOICE|RECEIPT", text, re.I)


def _company(lines: Sequence[Line], name: list[int]) -> FoundField:
    if not name:
        return decide("company", [], BARS["company"], seen=False)
    tokens = [t for n in name for t in lines[n].tokens]
    value = plain_text(_REG_NO.sub(" ", joined(tokens)))
    # A name that says it is a business (SDN BHD, TRADING) is surer than any first line.
    sure = (0.95 if _BUSINESS.search(value) else 0.85) * ocr_confidence(tokens)
    reading = Reading(value, tuple(tokens), sure, "heading")
    return decide("company", [reading], BARS["company"], seen=True)


def _address(lines: Sequence[Line], name: list[int]) -> FoundField:
    """The lines under the name, down to the postcode line (and the state after it)."""
    if not name:
        return decide("address", [], BARS["address"], seen=False)
    parts: list[Token] = []
    posted = doubt = False
    for line in lines[name[-1] + 1 : name[-1] + 8]:
        text = joined(line.tokens)
        if _AFTER_ADDRESS.search(text) or dates_in(text) or (parts and not _has_letters(text)):
            break
        if posted and not _STATES.search(text):
            # A short line of letters after the postcode may be a state OCR misspelt.
            doubt = len(line.tokens) <= 2 and not any(c.isdigit() for c in text)
            break
        if _REGISTRATION.search(text) or not _has_letters(text):
            continue
        if not parts and not any(c.isdigit() for c in text):
            continue  # a tagline under the name ("BISTRO & CAFE"): addresses start with a number
        parts.extend(line.tokens)
        posted = posted or bool(_POSTCODE.search(text))
    if not parts:
        return decide("address", [], BARS["address"], seen=True)
    doubt = doubt or any(_MISREAD.search(t.text) for t in parts)
    sure = (0.9 if posted else 0.8) * (0.8 if doubt else 1.0) * ocr_confidence(parts)
    reading = Reading(plain_text(joined(parts)), tuple(parts), sure, "heading")
    return decide("address", [reading], BARS["address"], seen=True)


def _has_letters(text: str) -> bool:
    return sum(c.isalpha() for c in text) >= 2


def _date(lines: Sequence[Line]) -> FoundField:
    """The date beside a date label; else the receipt's dates, which must agree."""
    readings = []
    for line in lines:
        text = joined(line.tokens)
        if re.search(r"expiry|exp\b|valid", text, re.IGNORECASE):
            continue  # a member card's expiry is not the receipt's date
        labelled = bool(re.search(r"date|tarikh", text, re.IGNORECASE))
        for hit in dates_in(text):
            sure = (1.0 if labelled else 0.95) * (0.8 if hit.repaired else 1.0)
            method = "anchor:right-of" if labelled else "pattern"
            readings.append(
                Reading(hit.iso, tuple(line.tokens), sure * ocr_confidence(line.tokens), method)
            )
    labelled_only = [r for r in readings if r.method == "anchor:right-of"]
    return decide("date", labelled_only or readings, BARS["date"], seen=bool(readings))


def _total(lines: Sequence[Line]) -> FoundField:
    anchors = find_anchors(lines, RECEIPT_LABELS)
    ranked = [
        (_rank(anchor), reading)
        for anchor in anchors
        if anchor.kind == "total" and (reading := _amount_after(anchor, lines, anchors)) is not None
    ]
    if not ranked:
        return decide("total", [], BARS["total"], seen=any(a.kind == "total" for a in anchors))
    best = min(rank for rank, _ in ranked)
    # Among equal labels (an items total, then the total with tax) the payable is the largest.
    payable = max((r for rank, r in ranked if rank == best), key=lambda r: Decimal(str(r.value)))
    return decide("total", [payable], BARS["total"], seen=True)


def _rank(anchor: Anchor) -> int:
    label = " ".join(t.text.lower() for t in anchor.tokens)
    return next((n for n, word in enumerate(_TOTAL_RANK) if word in label), len(_TOTAL_RANK))


def _amount_after(
    anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]
) -> Reading | None:
    line = lines[anchor.line]
    stop = min(
        (a.start for a in anchors if a.line == anchor.line and a.start >= anchor.end),
        default=len(line.tokens),
    )
    rest = list(line.tokens[anchor.end : stop])
    found = amounts_in(joined(rest)) if rest else []
    if not found:
        return None
    value = found[-1][0]
    sure = anchor.score * ocr_confidence(rest) * (0.9 if len({f[0] for f in found}) > 1 else 1.0)
    return Reading(value, tuple(rest), sure, "anchor:right-of")
