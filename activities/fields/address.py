"""A receipt's address (SROIE): the lines under the shop's name, down to how to reach it.

SROIE's address is the header's lines between the company's name and the
first telephone, tax, date or invoice line, joined with spaces. Lines of
registration numbers and former names are skipped; a tagline under the name
("BISTRO & CAFE") is skipped too, since an address starts with a number.
After the postcode line (Malaysian receipts: five digits) only a state may
follow. An address closed by such a line or by a postcode is well bounded;
one that merely runs out is less sure. Each word is checked (``wording``),
so a misread OCR was sure of sends the address to review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from activities.fields.choose import Reading, decide
from activities.fields.layout import Line, Token, joined
from activities.fields.normalise import dates_in, plain_text
from activities.fields.wording import ADDRESS_WORDS, STATES, check, near_state
from custody.fields import FoundField

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
_POSTCODE = re.compile(r"\b\d{5}\b")
#: An address bounded by a stop line or a postcode, and one that just ran out.
BOUNDED, LOOSE = 0.95, 0.8
#: How much less sure an address is with a word that looks misread.
DOUBT = 0.8


def read_address(lines: Sequence[Line], name: list[int], bar: float) -> FoundField:
    """The lines under the name, down to the postcode line (and the state after it)."""
    if not name:
        return decide("address", [], bar, seen=False)
    parts: list[Token] = []
    posted = bounded = doubt = False
    for line in lines[name[-1] + 1 : name[-1] + 8]:
        text = joined(line.tokens)
        stop = bool(_AFTER_ADDRESS.search(text) or dates_in(text))
        if stop or (parts and (not _has_letters(text) or _REGISTRATION.search(text))):
            # A registration number above the address is skipped; below it, it ends it.
            bounded = bool(parts)
            break
        if posted:
            state = _state(line.tokens)
            if state is None:
                # A short line of letters after the postcode may be a state OCR misspelt.
                doubt = len(line.tokens) <= 2 and not any(c.isdigit() for c in text)
                break
            parts.extend(state)
            continue
        if _REGISTRATION.search(text) or not _has_letters(text):
            continue
        if not parts and not any(c.isdigit() for c in text):
            continue  # a tagline under the name: addresses start with a number
        parts.extend(line.tokens)
        posted = bool(_POSTCODE.search(text))
    if not parts:
        return decide("address", [], bar, seen=True)
    checked = check(parts, ADDRESS_WORDS.__contains__)
    base = BOUNDED if posted or bounded else LOOSE
    sure = base * (DOUBT if doubt or checked.doubt else 1.0) * checked.confidence
    value = plain_text(joined(list(checked.tokens)))
    return decide("address", [Reading(value, tuple(parts), sure, "heading")], bar, seen=True)


def _state(tokens: Sequence[Token]) -> list[Token] | None:
    """The line as a state's name ("KUALA LUMPUR"), a word one letter off repaired; else None."""
    out = []
    for token in tokens:
        word = re.sub(r"[^A-Za-z]", "", token.text).upper()
        if word in STATES or re.match(r"^[A-Za-z]{3,}\.[A-Za-z]$", token.text):
            out.append(token)
        elif (state := near_state(token.text)) is not None:
            spelt = state if token.text.isupper() else state.title()
            out.append(replace(token, text=spelt))
        elif word:
            return None
    return out or None


def _has_letters(text: str) -> bool:
    return sum(c.isalpha() for c in text) >= 2
