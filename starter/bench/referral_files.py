"""How a drawn referral is written for the benches: its pages, and its truth beside them.

Shared by the referral generators (``starter.bench.referrals``, ``referrals_b``
to ``referrals_f``), which share only mechanics: layouts, wordings, fonts and
values are each their own. The first two draw their truth alike (``drawn_truth``,
from their own pools). The third to sixth also write the patient
identifiers they print apart from the truth (``write_identified``), for the
redaction bench alone (``identifiers_for``); the fourth to sixth keep only
those their pages print (``printed_identifiers``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Generic, Protocol, TypeVar

from PIL import Image


def write_referral(
    out: Path,
    stem: str,
    pages: list[Image.Image],
    truth: Mapping[str, str | bool | None],
    meta: dict[str, str],
    png_info: dict[str, Any] | None = None,
) -> Path:
    """One referral as PNG (one page, saved with ``png_info``) or PDF (several, 200 dpi),
    beside ``<stem>.fields.json`` (its truth and how it was drawn)."""
    if len(pages) == 1:
        path = out / f"{stem}.png"
        pages[0].save(path, **(png_info or {}))
    else:
        path = out / f"{stem}.pdf"
        pages[0].save(path, save_all=True, append_images=pages[1:], resolution=200.0)
    record = {"type": "referral", "fields": truth, "drawn": meta}
    (out / f"{stem}.fields.json").write_text(json.dumps(record, indent=1, sort_keys=True))
    return path


#: The referral fields a truth keeps exactly as printed (the date goes in as ISO, consent
#: as a boolean or None).
AS_PRINTED = ("participant_id", "referring_clinic", "clinician", "reason")
#: How a generator's page shows consent (each generator has its own).
ConsentT = TypeVar("ConsentT")
#: How a generator draws one family's pages.
FamilyT = TypeVar("FamilyT", bound=Callable[..., Any])


def by_name(*families: FamilyT) -> dict[str, FamilyT]:
    """Each family's drawing under its function's name, the layout a referral records, in
    the order given (a generator takes them in turn)."""
    return {family.__name__: family for family in families}


def referral_truth(
    shown: Mapping[str, str], referred: date, consent: bool | None
) -> dict[str, str | bool | None]:
    """The six referral fields' truth: four as ``shown``, the referral date as ISO, and
    consent (None: the page says nothing either way, so no value may go out)."""
    truth: dict[str, str | bool | None] = {name: shown[name] for name in AS_PRINTED}
    truth |= {"referral_date": referred.isoformat(), "consent": consent}
    return truth


def drawn_truth(
    rng: random.Random, pools: SimpleNamespace, referred: date, pid: str, given: float
) -> dict[str, str | bool]:
    """The six referral fields as the first two generators draw them: consent given with
    chance ``given``, then a clinic, a clinician and a reason from their ``pools``."""
    return {
        "referral_date": referred.isoformat(),
        "participant_id": pid,
        "consent": rng.random() < given,
        "referring_clinic": rng.choice(pools.clinics),
        "clinician": rng.choice(pools.clinicians),
        "reason": rng.choice(pools.reasons),
    }


def page_identifiers(shown: Mapping[str, str]) -> dict[str, str]:
    """What the redaction bench looks for on a page drawn with other people and numbers
    beside the patient's (the fourth to sixth generators): the patient's identifiers, the
    participant ID, the clinician, the other number and every other person ``shown``."""
    keys = ("patient_name", "date_of_birth", "mrn", "phone", "address", "participant_id")
    identifiers = {k: shown[k] for k in (*keys, "clinician")} | {"other_id_1": shown["other_id"]}
    return identifiers | {k: v for k, v in shown.items() if k.startswith("other_person_")}


class Printed:
    """What a drawn referral prints beside its labels, as a page's (label, value) rows."""

    labels: dict[str, str]
    shown: dict[str, str]

    def labelled(self, names: Iterable[str]) -> list[tuple[str, str]]:
        """(label as drawn, value as printed) of each of ``names``, in turn."""
        return [(self.labels[n], self.shown[n]) for n in names]

    def rows(self, spec: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
        """A form's rows from its ``(label, field)`` spec (its generator's pools), in turn:
        the label as written there, ``{name}`` in it the label drawn for ``name``."""
        return [(label.format_map(self.labels), self.shown[name]) for label, name in spec]


@dataclass
class DrawnValues(Printed, Generic[ConsentT]):
    """One referral's values: truth, what is printed, labels, redaction identifiers, and
    how its consent shows."""

    truth: dict[str, str | bool | None]
    shown: dict[str, str]
    labels: dict[str, str]
    identifiers: dict[str, str]
    consent: ConsentT
    meta: dict[str, str] = field(default_factory=dict)


@dataclass
class DrawnReferral:
    """One drawn referral: its pages, its truth, its printed identifiers apart, how it
    was drawn, and every string its pages print joined (for the tests; never written)."""

    stem: str
    truth: dict[str, str | bool | None]
    identifiers: dict[str, str]
    pages: list[Image.Image]
    meta: dict[str, str]
    printed: str = ""


class Identified(Protocol):
    """A drawn referral whose printed patient identifiers are kept apart from its truth."""

    @property
    def stem(self) -> str: ...
    @property
    def pages(self) -> list[Image.Image]: ...
    @property
    def truth(self) -> Mapping[str, str | bool | None]: ...
    @property
    def meta(self) -> dict[str, str]: ...
    @property
    def identifiers(self) -> dict[str, str]: ...


def write_identified(
    out: Path, count: int, seed: int, generate: Callable[[int, int], Identified]
) -> list[Path]:
    """Referrals ``0..count-1`` of set ``seed`` (PNG at 200 dpi, or PDF), each with
    ``<stem>.fields.json`` and ``<stem>.identifiers.json``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(count):
        ref = generate(index, seed)
        written.append(write_referral(out, ref.stem, ref.pages, ref.truth, ref.meta, _DPI))
        (out / f"{ref.stem}.identifiers.json").write_text(json.dumps(ref.identifiers, indent=1))
    return written


def printed_identifiers(identifiers: Mapping[str, str], said: str) -> dict[str, str]:
    """The identifiers among ``said`` (every string a referral's pages print, joined): each
    whose words are all among the printed words (a name may be printed surname first), or
    whose whole, spaces dropped, is in the printed text run together (a comb of boxes, a
    member ID run together); the others are not on its pages."""
    words = set(said.casefold().replace(",", " ").split())
    joined = "".join(said.casefold().split())

    def printed(value: str) -> bool:
        folded = value.casefold()
        return set(folded.replace(",", " ").split()) <= words or "".join(folded.split()) in joined

    return {k: v for k, v in identifiers.items() if printed(v)}


def identifiers_for(scan: Path) -> dict[str, str]:
    """The patient identifiers printed on ``scan`` (empty when it has none beside it)."""
    beside = scan.with_name(f"{scan.stem}.identifiers.json")
    return dict(json.loads(beside.read_text())) if beside.is_file() else {}


_DPI = {"dpi": (200, 200)}
