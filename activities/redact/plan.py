"""The redaction plan: which words go, the boxes painted over them, and why.

Hits come from four places: the fields the policy names, where extraction
read them (their page and box, ``custody.fields.FoundField``); the detectors;
the allow-list sweeps (``activities.redact.allow``: every word not known
safe); and, with ``sweep``, every further occurrence of a string already removed,
on any page and across line breaks (a name in a letter's heading and again
in its signature). A word goes when a hit names it or a removed box covers
most of it; the plan keeps each page's other words for the rebuilt text layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from activities.pages.wordbox import rect
from activities.redact.allow import sweep_words
from activities.redact.detect import Hit, detect, name_parts
from activities.redact.lines import Line, Tok, all_lines, page_lines
from activities.redact.policy import RedactionPolicy
from custody.fields import Extraction
from custody.models import PageText

_NAME_FIELDS = frozenset({"clinician", "participant_name", "patient_name", "name"})
_MIN_SECRET = 4  # shorter strings match by chance: "Dr", "12"
_COVERED = 0.3  # share of a word's area a removed box must cover for the word to go


@dataclass(frozen=True)
class Region:
    page: int
    box: tuple[int, int, int, int]
    reason: str
    source: str


@dataclass(frozen=True)
class Plan:
    regions: tuple[Region, ...]
    #: Every string removed, as printed: what the leak check must not find.
    secrets: frozenset[str]
    #: Each page with the removed words taken out.
    kept: tuple[PageText, ...]


def make_plan(
    pages: Sequence[PageText],
    extraction: Extraction | None,
    policy: RedactionPolicy,
) -> Plan:
    lines = all_lines(pages)
    hits = list(_field_hits(lines, extraction, policy.fields)) + detect(
        lines, policy.detectors, unread=True
    )
    hits += sweep_words(lines, policy.sweeps)
    secrets = {s for hit in hits for s in hit.strings}
    if policy.sweep:
        hits += sweep(lines, secrets)
    regions = _regions(hits, extraction, policy)
    return Plan(
        tuple(regions), frozenset(s for s in secrets if _long(s)), kept_pages(pages, regions, hits)
    )


def normal(text: str) -> str:
    """What matching compares: letters and digits, lower case."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _long(text: str) -> bool:
    return len(normal(text)) >= _MIN_SECRET


def _field_hits(
    lines: Sequence[Line], extraction: Extraction | None, names: Sequence[str]
) -> Iterator[Hit]:
    for name in names:
        found = extraction.fields.get(name) if extraction else None
        if found is None or found.page is None or found.box is None:
            continue
        box, page = found.box, found.page
        toks = tuple(
            t
            for line in lines
            for t in line.tokens
            if t.page == page and _share(_box(t), box) >= 0.5
        )
        printed = " ".join(t.text for t in toks)
        strings = [printed] if printed else []
        if isinstance(found.value, str):
            strings.append(found.value)
        if name in _NAME_FIELDS:
            strings = [part for s in strings for part in name_parts(s)]
        yield Hit(toks, "field", name, tuple(strings))


def _box(tok: Tok) -> tuple[int, int, int, int]:
    return tok.x0, tok.y0, tok.x1, tok.y1


def sweep(lines: Sequence[Line], secrets: set[str] | frozenset[str]) -> Iterator[Hit]:
    """Every occurrence of a removed string on any page, line breaks ignored: a name that
    wraps ("... at FUYI MINI" / "MARKET") reads as one string to the check and to a reader."""
    wanted = {normal(s) for s in secrets if _long(s)}
    pages: dict[int, list[Line]] = {}
    for line in lines:
        pages.setdefault(line.tokens[0].page, []).append(line)
    for page in pages.values():
        flat, owner = _flatten(page)
        for needle in wanted:
            for match in re.finditer(re.escape(needle), flat):
                toks = tuple(dict.fromkeys(owner[match.start() : match.end()]))
                yield Hit(toks, "sweep", "sweep", ())


def _flatten(lines: Sequence[Line]) -> tuple[str, list[Tok]]:
    """The lines' letters and digits in reading order, lower case, and the word each came from."""
    chars, owner = [], []
    for tok in (tok for line in lines for tok in line.tokens):
        for char in normal(tok.text):
            chars.append(char)
            owner.append(tok)
    return "".join(chars), owner


def _regions(
    hits: Sequence[Hit], extraction: Extraction | None, policy: RedactionPolicy
) -> list[Region]:
    seen: dict[tuple[int, tuple[int, int, int, int]], Region] = {}
    for hit in hits:
        for tok in hit.toks:
            pad = round(policy.padding * tok.height)
            box = (tok.x0 - pad, tok.y0 - pad, tok.x1 + pad, tok.y1 + pad)
            seen.setdefault((tok.page, box), Region(tok.page, box, hit.reason, hit.source))
    for name in policy.fields:  # the field's own box, even where no OCR word lies in it
        found = extraction.fields.get(name) if extraction else None
        if found is not None and found.page is not None and found.box is not None:
            box = (found.box[0], found.box[1], found.box[2], found.box[3])
            seen.setdefault((found.page, box), Region(found.page, box, "field", name))
    return list(seen.values())


def kept_pages(
    pages: Sequence[PageText], regions: Sequence[Region], hits: Sequence[Hit] = ()
) -> tuple[PageText, ...]:
    """Each page without the words a hit names or a region covers. From the regions alone
    (a stored view's map) it is the same: every named word lies inside its own region."""
    named = {(t.page, t.index) for hit in hits for t in hit.toks}
    kept = []
    for page in pages:
        boxes = [r.box for r in regions if r.page == page.page]
        words = [
            w
            for i, w in enumerate(page.words)
            if (page.page, i) not in named
            and not any(_share(rect(w), b) >= _COVERED for b in boxes)
        ]
        remaining = page.model_copy(update={"words": words})
        text = "\n".join(line.text for line in page_lines(remaining))
        kept.append(remaining.model_copy(update={"text": text}))
    return tuple(kept)


def _share(word: Sequence[int], box: Sequence[int]) -> float:
    """The share of ``word``'s area inside ``box``."""
    w = max(0, min(word[2], box[2]) - max(word[0], box[0]))
    h = max(0, min(word[3], box[3]) - max(word[1], box[1]))
    area = max(1, (word[2] - word[0]) * (word[3] - word[1]))
    return w * h / area
