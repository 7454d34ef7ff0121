"""The check that does not trust the plan: every detector re-run on what the view shows.

The plan decides from the source's words; a word it never saw (an annotation
drawn over a born-digital page, a label pasted in as an image, a value OCR
read differently the first time) is still printed in the view. So the
finished view is read again, by the same OCR engine the workers use, by a second engine of
another family where the check has one, and by its own text layer, and every
detector of the policy runs on each reading,
with the allow-list sweeps (a word not known safe is found, whatever the
detectors know) and the sweep for every string the plan removed. Anything found is a
:class:`Found`: its detector (``kind``), its page and its box in the view's
pixels. What leaves this module is only ``{kind, page, box}``; the strings
stay in the process, to paint them over in the next round (``core``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from activities.redact.allow import sweep_words
from activities.redact.check import Surfaces
from activities.redact.detect import Hit, detect
from activities.redact.lines import Tok, all_lines
from activities.redact.plan import sweep
from activities.redact.policy import RedactionPolicy
from custody.models import PageText

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Found:
    """One identifier a detector found in a view, and where; ``strings`` never leave."""

    kind: str
    page: int
    box: Box
    toks: tuple[Tok, ...]
    strings: tuple[str, ...]

    def public(self) -> dict[str, object]:
        """What a refusal says of it: kind, page (0-based, as the view's map) and box."""
        return {"kind": self.kind, "page": self.page, "box": list(self.box)}


def scan(surfaces: Surfaces, policy: RedactionPolicy, removed: Iterable[str]) -> list[Found]:
    """Every identifier the policy's detectors, or the sweep for ``removed``, find in the
    view's re-OCR (by each engine) and in its text layer."""
    wanted = frozenset(removed)
    found: list[Found] = []
    for pages in (surfaces.ocr_pages, surfaces.second_pages, surfaces.layer_pages):
        found += _read(pages, policy, wanted)
    return found


def _read(
    pages: Sequence[PageText], policy: RedactionPolicy, removed: frozenset[str]
) -> list[Found]:
    lines = all_lines(pages)
    hits = detect(lines, policy.detectors) + list(sweep_words(lines, policy.sweeps))
    hits += sweep(lines, removed)
    return [found for hit in hits for found in _per_page(hit)]


def _per_page(hit: Hit) -> list[Found]:
    """A hit's words grouped by page, each group as one box around them."""
    kind = "removed_string" if hit.source == "sweep" else hit.source
    pages: dict[int, list[Tok]] = {}
    for tok in hit.toks:
        pages.setdefault(tok.page, []).append(tok)
    return [
        Found(kind, page, _around(toks), tuple(toks), hit.strings) for page, toks in pages.items()
    ]


def _around(toks: Sequence[Tok]) -> Box:
    return (
        min(t.x0 for t in toks),
        min(t.y0 for t in toks),
        max(t.x1 for t in toks),
        max(t.y1 for t in toks),
    )
