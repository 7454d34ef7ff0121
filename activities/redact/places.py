"""Where someone can be reached: phone numbers, email addresses, postal addresses, organisations.

Found by shape anywhere on a page, because a letterhead or a receipt prints
them without labels:

- **Phone.** Digit groups of 2 to 6 split by spaces, dots or hyphens
  ("01234 567890"), a country code or a bracketed area code allowed, 9 to 13
  digits in all (a date has 8, an MRN fewer).
- **Email.** ``local@domain.tld``.
- **Address.** A house number before a street word (Street, Rd, Jalan, Taman,
  ...), a street word before a number ("Lot 485", "No. 8"), a postcode before
  a place name ("45600 Bestari Jaya"), a UK postcode or a US state and ZIP. A
  line with any of them goes whole: its other words are the town and the
  street.
- **Organisation.** A company's legal suffix (Sdn Bhd, Ltd, LLC, Inc,
  Enterprise, Trading); and, on a page with an address, the capitalised
  lines just above it: a receipt's or letterhead's name sits there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from activities.redact.lines import Line

_PHONE = re.compile(
    r"(?<![\w/.-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d{2,6}(?:[\s.-]\d{2,6}){1,3}(?![\w/])"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_STREET = (
    r"street|st|road|rd|avenue|ave|lane|ln|drive|close|way|court|ct|place|boulevard|blvd"
    r"|crescent|terrace|highway|square|grove|gardens|jalan|jln|taman|tmn|lorong|persiaran|lebuh"
)
_ADDRESS = (
    re.compile(
        rf"\b\d{{1,5}}[A-Z]?(?:[-/]\d*[A-Z]?)*,?\s+(?:[\w/.'-]+\s+){{0,3}}(?:{_STREET})\b"
        rf"|\b(?:{_STREET}|lot|no)\.?\s*\d{{1,5}}\b",
        re.I,
    ),
    # A house number, a comma and a numbered block or section: "109, SS21/1A".
    re.compile(r"^\d{1,5}[A-Z]?,\s+[A-Z]*\d+[\w/-]*"),
    # Case matters here: a postcode is followed by a place's capital, a ZIP by a state's.
    re.compile(
        r"\b\d{5}\s+[A-Z][A-Za-z]+|\b[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\b"
        r"|\b[A-Z]{2}\s\d{5}(?:-\d{4})?\b"
    ),
)
_ORG = re.compile(
    r"\b(?:sdn\.?\s*bhd|bhd|s/b|ltd|limited|llc|inc|plc|enterprises?|trading)\b\.?", re.I
)
_HEADER = 3  # lines above a page's first address line that may name its organisation
_TOWN = 2  # capitalised lines under an address line that may be its town and region


def phones(line: Line) -> Iterator[tuple[int, int]]:
    for match in _PHONE.finditer(line.text):
        if 9 <= sum(c.isdigit() for c in match.group()) <= 13:
            yield match.start(), match.end()


def emails(line: Line) -> Iterator[tuple[int, int]]:
    for match in _EMAIL.finditer(line.text):
        yield match.start(), match.end()


def address_lines(lines: Sequence[Line]) -> list[int]:
    """The indices of the lines that print part of an address: those with an address's
    shape, and up to ``_TOWN`` capitalised lines under each without a label (its town)."""
    found = [n for n, line in enumerate(lines) if any(p.search(line.text) for p in _ADDRESS)]
    towns = set()
    for n in found:
        for below in range(n + 1, min(len(lines), n + 1 + _TOWN)):
            line = lines[below]
            if line.page != lines[n].page or ":" in line.text or not _capitalised(line.text):
                break
            towns.add(below)
    return sorted(set(found) | towns)


def organisation_lines(lines: Sequence[Line], addresses: Sequence[int]) -> Iterator[int]:
    """Lines with a company suffix, and the capitalised lines just above each page's first
    address line."""
    firsts: dict[int, int] = {}
    for n in addresses:
        firsts.setdefault(lines[n].page, n)
    for n, line in enumerate(lines):
        first = firsts.get(line.page)
        above = first is not None and first - _HEADER <= n < first and n not in addresses
        if _ORG.search(line.text) or (above and _capitalised(line.text)):
            yield n


def _capitalised(text: str) -> bool:
    words = [w for w in text.split() if any(c.isalpha() for c in w)]
    return bool(words) and all(w[0].isupper() for w in words)
