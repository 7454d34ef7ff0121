"""Values into their normal form: ISO dates, decimal totals, booleans, trimmed text.

Numeric dates are read day first (14/03/2026); one whose day and month could
swap (04/05/2026) is singled out only where its page shows which comes first
(``day_first``, ``month_first``); month names and ISO dates are unambiguous.
Each parser says whether it had to repair the text (an ``O`` read for a ``0``,
a month name one letter off): a repaired value is less sure, and the field
readers lower its confidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_SEP = r"[\s]*[-/.][\s]*"
_NUM = r"[0-9OolI|]"
_ISO = re.compile(rf"(?<![0-9])({_NUM}{{4}}){_SEP}({_NUM}{{1,2}}){_SEP}({_NUM}{{1,2}})(?![0-9])")
# Day first; both separators the same ("19- 10/03" is not a date), and a
# four-digit year may run straight into a time ("18-03-201811:23").
_DMY = re.compile(
    rf"(?<![0-9])({_NUM}{{1,2}})\s*([-/.])\s*({_NUM}{{1,2}})\s*\2\s*"
    rf"({_NUM}{{4}}(?=\d{{1,2}}:\d{{2}})|{_NUM}{{4}}(?![0-9])|{_NUM}{{2}}(?![0-9]))"
)
#: Day, month and year in comb boxes or spaced out ("12 01 2026"): two, two and four
#: digits, nothing else between them.
_DMY_SPACED = re.compile(r"(?<![0-9])([0-9]{2}) {1,3}([0-9]{2}) {1,3}([0-9]{4})(?![0-9])")
_D_MON_Y = re.compile(
    r"(?<![0-9])(\d{1,2})(?:st|nd|rd|th)?(?:\s+day)?(?:\s+of)?[\s\-./]*([A-Za-z]{3,9})\.?"
    r"[\s\-./,]*['\u2019]?(\d{4}|\d{2})(?![0-9])"
)
#: A month in Roman numerals between day and year, as European letters print it (3.iii.2026).
_D_ROMAN_Y = re.compile(
    r"(?<![0-9A-Za-z])(\d{1,2})\s*([-/.])\s*(xii|xi|x|ix|viii|vii|vi|v|iv|iii|ii|i)\s*\2\s*"
    r"(\d{4}|\d{2})(?![0-9A-Za-z])",
    re.I,
)
_ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii")
_MON_D_Y = re.compile(r"([A-Za-z]{3,9})\.?\s*(\d{1,2})(?:st|nd|rd|th)?\s*,?\s*(\d{4})(?![0-9])")
_STYLES = (
    (_ISO, "ymd"),
    (_DMY, "dmy"),
    (_DMY_SPACED, "dmy"),
    (_D_ROMAN_Y, "dmy"),
    (_D_MON_Y, "dMy"),
    (_MON_D_Y, "Mdy"),
)
_DIGIT_FIXES = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "|": "1"})
_AMOUNT = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)[.,](\d{2})(?![\d])")
_TRIM = " \t:;,.'\"-_|"


@dataclass(frozen=True)
class DateHit:
    iso: str
    start: int
    end: int
    repaired: bool


def dates_in(text: str) -> list[DateHit]:
    """Every date printed in ``text``, in order, each as an ISO string."""
    hits: list[DateHit] = []
    for pattern, order in _STYLES:
        for m in pattern.finditer(text):
            if any(h.start < m.end() and m.start() < h.end for h in hits):
                continue  # one stretch of text is one date, read by the first style that fits
            parts = m.groups()
            if pattern in (_DMY, _D_ROMAN_Y):
                parts = (parts[0], parts[2], parts[3])  # the separator is no part of the date
            if pattern is _D_ROMAN_Y:
                parts = (parts[0], str(_ROMAN.index(parts[1].lower()) + 1), parts[2])
            hit = _read(parts, order, m.start(), m.end())
            if hit is not None:
                hits.append(hit)
    return sorted(hits, key=lambda h: h.start)


#: A format note that puts the month first ("(MM/DD/YYYY)", "mm-dd-yy").
_MONTH_FIRST_NOTE = re.compile(r"\bmm\s*[-/.]\s*dd\b", re.I)


def _day_and_month(text: str) -> list[tuple[int, int]]:
    """The first two numbers of each numeric date in ``text``, as printed."""
    fixed = text.translate(_DIGIT_FIXES)
    pairs = [(int(m.group(1)), int(m.group(3))) for m in _DMY.finditer(fixed)]
    return pairs + [(int(m.group(1)), int(m.group(2))) for m in _DMY_SPACED.finditer(fixed)]


def month_first_note(text: str) -> bool:
    """Whether ``text`` holds a format note that puts the month first, and none the day."""
    return bool(_MONTH_FIRST_NOTE.search(text)) and not _DAY_FIRST_NOTE.search(text)


def month_first(text: str) -> bool:
    """Whether ``text`` prints dates month first: a format note says so, or a numeric date
    reads only that way ("07/16/1952", whose second number is no month)."""
    if _MONTH_FIRST_NOTE.search(text):
        return True
    return any(first <= 12 < second <= 31 for first, second in _day_and_month(text))


#: A format note that puts the day first ("(DD/MM/YYYY)", "dd-mm-yy", "DD MM YYYY").
_DAY_FIRST_NOTE = re.compile(r"\bdd\s*[-/. ]\s*mm\b", re.I)


def day_first(text: str) -> bool:
    """Whether ``text`` prints dates day first: a format note says so, or a numeric date
    reads only that way ("23/11/1970", whose second number is the month)."""
    if _DAY_FIRST_NOTE.search(text):
        return True
    return any(second <= 12 < first <= 31 for first, second in _day_and_month(text))


def day_month_swappable(text: str) -> bool:
    """Whether a numeric date in ``text`` reads as another date with day and month swapped."""
    return any(d != m and d <= 12 and m <= 12 for d, m in _day_and_month(text))


def iso_date(text: str) -> str | None:
    """The single date ``text`` holds, in ISO form; None when it holds none or several."""
    hits = dates_in(text)
    return hits[0].iso if len(hits) == 1 else None


def _read(parts: tuple[str, ...], order: str, start: int, end: int) -> DateHit | None:
    fields = dict(zip(order, parts, strict=True))
    repaired = False
    numbers: dict[str, int] = {}
    for key in ("d", "m", "y"):
        if key not in fields:
            continue
        fixed = fields[key].translate(_DIGIT_FIXES)
        repaired |= fixed != fields[key]
        numbers[key] = int(fixed)
    if "M" in fields:
        month, fuzzy = month_number(fields["M"])
        if month is None:
            return None
        numbers["m"], repaired = month, repaired or fuzzy
    year = numbers["y"]
    if len(fields["y"]) == 2:
        year += 2000 if year < 70 else 1900
    try:
        when = date(year, numbers["m"], numbers["d"])
    except ValueError:
        return None
    if not 1900 <= when.year <= 2100:
        return None
    return DateHit(when.isoformat(), start, end, repaired)


def month_number(word: str) -> tuple[int | None, bool]:
    """The month a name or its three-letter short form means, and whether it was one edit off."""
    word = word.lower().rstrip(".")
    for n, name in enumerate(MONTHS, 1):
        if word in (name, name[:3]) or (word == "sept" and n == 9):
            return n, False
    if len(word) >= 4:
        near = [n for n, name in enumerate(MONTHS, 1) if edit_distance(word, name) == 1]
        if len(near) == 1:
            return near[0], True
    return None, False


def amounts_in(text: str) -> list[tuple[str, int, int]]:
    """Money amounts (two decimals) in ``text`` as ("1234.50", start, end)."""
    found = []
    for m in _AMOUNT.finditer(text):
        value = decimal_text(f"{m.group(1).replace(',', '')}.{m.group(2)}")
        if value is not None:
            found.append((value, m.start(), m.end()))
    return found


def decimal_text(text: str) -> str | None:
    """A total as a decimal string with two places ("RM53.6" -> "53.60")."""
    cleaned = re.sub(r"[^\d.]", "", text.replace(",", ""))
    try:
        return str(Decimal(cleaned).quantize(Decimal("0.01")))
    except (InvalidOperation, ValueError):
        return None


_YES = frozenset({"yes", "y", "true", "given", "obtained", "granted", "agreed", "agrees"})
_NO = frozenset({"no", "n", "false", "declined", "refused", "withheld", "withdrawn", "denied"})


def consent_word(text: str) -> bool | None:
    """An answer word as a boolean (yes, given, granted; no, declined, withheld); else None."""
    word = re.sub(r"[^a-z]", "", text.lower())  # "□No": a box glyph read into the word
    if word in _YES:
        return True
    if word in _NO:
        return False
    return None


def identifier(text: str) -> str:
    """An identifier as printed, without the punctuation OCR leaves around it."""
    # OCR reads a printed X as a multiplication sign ("K×0529"); no identifier holds one.
    return text.strip(_TRIM + "#").replace("\u00d7", "X")


def plain_text(text: str) -> str:
    """Free text with runs of whitespace collapsed and end punctuation trimmed."""
    return " ".join(text.split()).strip(" \t:;,.")


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (short strings: labels and month names)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]
