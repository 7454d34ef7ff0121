"""The strings a redacted view must not hold, from ground truth the plan was never told.

The view's own check re-runs the detectors, so a value no detector knows
(a name not in the lexicon, a company without a suffix) would pass it. The
benchmark therefore searches every view for each identifier's *true* value,
in the forms it may be printed: as written, upper and lower
case, without spaces, a date in every style the referral generator prints
(``starter.bench.referrals.DATE_STYLES``), and a person's name as each of
its words but titles (a surname alone in a letter's sign-off), an address as
each of its comma-separated parts (a street, a postcode and town). Text is
compared on letters and digits, so case and spacing matter only for the
search of the raw bytes; a hit in a page's text counts where it begins or ends at
a word's edge (an OCR's "October GE" joined holds "berg", and reads no name).

Findings name the field and where (``participant_id@ocr:p1``), never the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from activities.fields.normalise import iso_date
from activities.redact.check import Surfaces, find
from activities.redact.detect import name_parts
from activities.redact.plan import normal
from starter.bench.fields_score import Truth
from starter.bench.referrals import DATE_STYLES

_NAME_FIELDS = frozenset({"clinician", "participant_name", "patient_name", "name"})
#: Numbered identifiers a page may carry several of (the fourth generator's): every
#: other person named on it, every other number that identifies the patient.
_NUMBERED = ("other_person_", "other_id_")
#: The ground truth's identifiers: referrals', receipts' (company, address) and the
#: born-digital pages'.
IDENTIFIERS = (
    "participant_id", "clinician", "patient_name", "date_of_birth", "mrn", "address", "phone",
    "company",
)  # fmt: skip
_MIN = 4  # as the plan's own check: shorter strings match by chance
_PART = 6  # an address's comma-separated part this long (letters and digits) is a leak alone


def truth_strings(truth: Truth, fields: Sequence[str] = IDENTIFIERS) -> dict[str, list[str]]:
    """Each identifier with a true value, and the strings that would leak it; the
    numbered ones (``other_person_1``) whenever the truth has them."""
    found = {}
    numbered = [name for name in sorted(truth.fields) if name.startswith(_NUMBERED)]
    for name in [*fields, *numbered]:
        value = truth.fields.get(name)
        if isinstance(value, str) and value.strip():
            found[name] = variants(name, value)
    return found


def variants(name: str, value: str) -> list[str]:
    value = value.strip()
    forms = {value, value.upper(), value.lower(), "".join(value.split())}
    day = _date(value)
    if day is not None:
        forms |= {show(day) for show in DATE_STYLES.values()}
    if name in _NAME_FIELDS or name.startswith("other_person_"):
        forms |= set(name_parts(value))
    if name == "address":  # a street or a postcode and town is readable on its own
        forms |= {part.strip(" .") for part in value.split(",") if len(normal(part)) >= _PART}
    return sorted(f for f in forms if len(normal(f)) >= _MIN)


def truth_leaks(surfaces: Surfaces, strings: dict[str, list[str]]) -> list[str]:
    """``field@where`` for each field whose true value the view still holds."""
    return [
        f"{name}@{where}"
        for name, forms in strings.items()
        for where in find(surfaces, forms, at_word_edge=True)
    ]


def _date(value: str) -> date | None:
    iso = iso_date(value)
    try:
        return date.fromisoformat(iso) if iso else None
    except ValueError:
        return None
