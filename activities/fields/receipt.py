"""Receipt fields (SROIE): company, date, address, total.

The company is the head's line with a legal suffix (SDN BHD, TRADING), else
its first line of words; the address is read under it (``address``). The
date is the one on a line with a date label, else the receipt's dates, which
must agree. The total is the amount beside the best total label (grand,
rounded or nett before a plain total; never a subtotal, a tax total, the cash
or the change), the largest when several labels rank alike; with no total
label, the cash less the change when another line prints that amount. A name
has no grammar to check it, so its words are checked (``wording``): a misread
no known word repairs makes it review rather than a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from activities.fields.address import DOUBT, read_address
from activities.fields.anchors import Anchor, find_anchors
from activities.fields.choose import Reading, decide, ocr_confidence
from activities.fields.labels import RECEIPT_LABELS
from activities.fields.layout import Line, joined
from activities.fields.normalise import amounts_in, dates_in, plain_text
from activities.fields.wording import BUSINESS_WORDS, check
from custody.fields import FoundField

BARS = {"company": 0.8, "date": 0.85, "address": 0.85, "total": 0.85}
_BUSINESS = re.compile(
    r"\b(SDN|BHD|BERHAD|ENTERPRISE|TRADING|RESTAURANTS?|SHOP|MARKET|STORE|STATIONERY|CO\.?|"
    r"HARDWARE|MART|CAFE|BAKERY|PHARMACY|KEDAI|SUPERMARKET|RESTORAN|LTD|PLT)\b",
    re.IGNORECASE,
)
#: Words that continue a shop's name on the next line ("POPULAR BOOK" / "CO. (M) SDN BHD").
_NAME_TAIL = re.compile(r"^(CO\.?|\(M\)|SDN|BHD|BERHAD|ENTERPRISE|TRADING)\b", re.IGNORECASE)
#: A legal entity's suffix: the line that carries it is the company's name.
_LEGAL = re.compile(r"\b(SDN\.?\s*BHD|BERHAD|ENTERPRISE|TRADING|PLT|LTD)\b", re.IGNORECASE)
_REG_NO = re.compile(r"\(\s*[A-Z0-9-]*\d[A-Z0-9-]*\s*\)")
_Amount = tuple[Decimal, int, float]
#: Label words that make a total the payable one, best first.
_TOTAL_RANK = ("grand", "rounded", "nett", "net", "incl", "inclusive", "payable", "due")


def read_receipt(lines: Sequence[Line]) -> dict[str, FoundField]:
    name = _name_lines(lines)
    return {
        "company": _company(lines, name),
        "date": _date(lines),
        "address": read_address(lines, name, BARS["address"]),
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
    tokens = [t for n in name for t in lines[n].tokens if not _REG_NO.fullmatch(t.text)]
    checked = check(tokens, BUSINESS_WORDS.__contains__)
    value = plain_text(_REG_NO.sub(" ", joined(list(checked.tokens))))
    # A name that says it is a business (SDN BHD, TRADING) is surer than any first line.
    sure = (0.95 if _BUSINESS.search(value) else 0.85) * checked.confidence
    sure *= DOUBT if checked.doubt else 1.0
    reading = Reading(value, tuple(tokens), sure, "heading")
    return decide("company", [reading], BARS["company"], seen=True)


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
        paid = _paid(lines, anchors)
        seen = any(a.kind == "total" for a in anchors)
        return decide("total", paid, BARS["total"], seen=seen or bool(paid))
    best = min(rank for rank, _ in ranked)
    # Among equal labels (an items total, then the total with tax) the payable is the largest;
    # of one amount read twice, the surer reading (an item line OCR made look like a label
    # can print the same amount).
    payable = max(
        (r for rank, r in ranked if rank == best),
        key=lambda r: (Decimal(str(r.value)), r.confidence),
    )
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


def _paid(lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Reading]:
    """With no total label, the cash less the change, when the receipt prints that amount.

    Two printed amounts agree on it (a subtotal that is the payable, say), so
    it is as sure as a labelled total; uncorroborated, it is no reading.
    """
    cash, change = _labelled("cash", lines, anchors), _labelled("change", lines, anchors)
    if cash is None or change is None or change[0] >= cash[0]:
        return []
    due = str(cash[0] - change[0])
    for n, line in enumerate(lines):
        # "RM53. 60": OCR may split an amount at its point.
        text = re.sub(r"(?<=\d[.,])\s+(?=\d{2}\b)", "", joined(line.tokens))
        if n in (cash[1], change[1]) or due not in (a[0] for a in amounts_in(text)):
            continue
        sure = 0.9 * min(ocr_confidence(line.tokens), cash[2], change[2])
        return [Reading(due, tuple(line.tokens), sure, "sum:cash-change")]
    return []


def _labelled(word: str, lines: Sequence[Line], anchors: Sequence[Anchor]) -> _Amount | None:
    """The one amount beside a label starting with ``word``: (amount, line, confidence)."""
    found = {
        (Decimal(str(reading.value)), anchor.line, reading.confidence)
        for anchor in anchors
        if anchor.tokens[0].text.lower().startswith(word)
        and (reading := _amount_after(anchor, lines, anchors)) is not None
    }
    return found.pop() if len({f[0] for f in found}) == 1 else None
