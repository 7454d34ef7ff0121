"""The referral generators' pools: wordings, people, sites and date styles, as data.

What a generator draws from (a label's wordings, a consent sentence, a clinic,
how a date is printed) is a convention of the paper it imitates, not logic, so
each generator's pools are one file, ``data/<generator>.json`` beside this
module, read once: two generators' wordings are compared by reading two files.
JSON's lists come back as tuples, so a pool stays as drawn and pools join with
``+``. A date style is a ``str.format`` template (``DateStyle``), and so is the
shape of a drawn identifier (``Shape``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import date, time
from functools import cache
from importlib import resources
from string import Formatter
from types import SimpleNamespace
from typing import Any

# English whatever the locale: the pages imitate English-language paper.
_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July"),
    *("August", "September", "October", "November", "December"),
)
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
_MIDNIGHT = time(0, 0)


@cache
def pools(generator: str) -> SimpleNamespace:
    """The pools of ``data/<generator>.json``, each by its name, lists as tuples."""
    data = resources.files("starter.bench").joinpath("data", f"{generator}.json")
    loaded = json.loads(data.read_text(encoding="utf-8"))
    return SimpleNamespace(**{name: _tuples(pool) for name, pool in loaded.items()})


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    if isinstance(value, dict):
        return {key: _tuples(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class DateStyle:
    """A printed date style: a ``str.format`` template over the date ``d`` (with its
    ``strftime`` codes: ``{d:%d.%m.%Y}``), the time of day ``t``, and ``iso``,
    ``month`` (``March``), ``mon`` (``Mar``), ``MON`` (``MAR``), ``ordinal`` (``3rd``),
    ``roman`` (the month: ``III``), ``hour12`` and ``ampm``."""

    template: str

    def __call__(self, d: date, t: time = _MIDNIGHT) -> str:
        month = _MONTHS[d.month - 1]
        return self.template.format(
            d=d,
            t=t,
            iso=d.isoformat(),
            month=month,
            mon=month[:3],
            MON=month[:3].upper(),
            ordinal=_ordinal(d.day),
            roman=_ROMAN[d.month - 1],
            hour12=t.hour % 12 or 12,
            ampm="am" if t.hour < 12 else "pm",
        )


def date_styles(templates: dict[str, str]) -> dict[str, DateStyle]:
    """Each named template as a ``DateStyle``, in the order given (a draw's order)."""
    return {name: DateStyle(template) for name, template in templates.items()}


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


@dataclass(frozen=True)
class Shape:
    """An identifier's shape: a template whose ``{lo-hi}`` is a whole number drawn from lo
    to hi (printed with a format spec: ``{0-999:04d}``) and whose ``{a|b|c}`` is one of
    the words, drawn from left to right."""

    template: str

    def __call__(self, rng: random.Random) -> str:
        drawn = []
        for literal, field, spec, _ in Formatter().parse(self.template):
            drawn.append(literal)
            if field is not None:
                drawn.append(format(_draw(rng, field), spec or ""))
        return "".join(drawn)


def _draw(rng: random.Random, field: str) -> int | str:
    if "|" in field:
        return rng.choice(field.split("|"))
    low, high = field.split("-")
    return rng.randint(int(low), int(high))
