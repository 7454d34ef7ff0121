"""One document's redacted view from its page images and recognised words, checked.

Kept apart from the store, so the service, the release and the benchmark all
make views the same way: plan, paint, rebuild, check. The check does not
trust the plan (``activities.redact.scan``): the finished view is read again
by OCR (the workers' engine, and a second engine of another family when one
is given), and by its text layer, and every detector re-runs on each reading. What they
find is painted over and the view rebuilt, for at most ``_ROUNDS`` rounds, so
whatever the page draws (an annotation, a pasted label, a value the first
reading misread) is planned from an OCR of the rendered page; a view is
kept only when a round finds nothing at all. One that still shows an
identifier raises ``IdentifierFound`` (its finds by kind, page and box), one
that still holds a removed string in its bytes or metadata ``RedactionLeak``;
neither is returned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from activities.engines.base import OcrEngine
from activities.pages.raster import GrayPage
from activities.redact.check import CheckReport, Surfaces, read_surfaces, report
from activities.redact.paint import build_pdf, paint
from activities.redact.plan import Plan, Region, kept_pages, make_plan, normal
from activities.redact.policy import RedactionPolicy
from activities.redact.scan import Found, scan
from custody.errors import IdentifierFound, RedactionLeak, RenderFailed
from custody.fields import Extraction
from custody.models import PageText

#: Rounds of paint-and-read: the first paints the plan, each later one what the last found.
#: Four, not three, since the check has a second reader: on seed 10 of the redaction
#: bench three clean views still had a find in round 3 (a word painted elsewhere, found
#: again) and were refused; with a fourth round all three were kept.
_ROUNDS = 4


@dataclass(frozen=True)
class Made:
    pdf: bytes
    text: str
    plan: Plan
    report: CheckReport
    #: What the check read from the view: the benchmark searches it for its truth too.
    surfaces: Surfaces


def make_view(
    images: Iterable[tuple[int, GrayPage]],
    pages: Sequence[PageText],
    extraction: Extraction | None,
    policy: RedactionPolicy,
    engine: OcrEngine,
    dpi: int,
    second: OcrEngine | None = None,
) -> Made:
    """The view, kept only when no detector finds anything in it and no removed string is
    in it anywhere; ``second`` is the check's second reader (``build_checker``)."""
    plan = make_plan(pages, extraction, policy)
    sources = _pages(images, plan)
    if len(sources) != len(pages):
        raise RenderFailed("the source has another page count than its record")
    for _ in range(_ROUNDS):
        pdf = build_pdf(_painted(sources, plan), dpi)
        surfaces = read_surfaces(pdf, engine, dpi, second, plan.regions)
        found = scan(surfaces, policy, plan.secrets)
        checked = report(surfaces, plan.secrets)
        if not found and checked.clean:
            text = "\n\n".join(page.text for page in plan.kept)
            return Made(pdf, text, plan, checked, surfaces)
        grown = _grow(plan, pages, found, policy)
        if grown.regions == plan.regions:
            break  # nothing new to paint: painting again would read the same
        plan = grown
    refusal = (
        IdentifierFound(detail=f"found: {json.dumps([f.public() for f in found])}")
        if found
        else RedactionLeak(detail=f"found in {', '.join(checked.leaks)}")
    )
    refusal.view = pdf
    raise refusal


def _pages(images: Iterable[tuple[int, GrayPage]], plan: Plan) -> list[tuple[GrayPage, int]]:
    """The source images, each matched to the page OCR read (the boxes are in its pixels)."""
    kept = {page.page: page for page in plan.kept}
    sources = []
    for index, image in images:
        words = kept.get(index)
        if words is None or image.shape != (words.height, words.width):
            raise RenderFailed(f"page {index + 1} differs from the page OCR read")
        sources.append((image, index))
    return sources


def _painted(
    sources: Sequence[tuple[GrayPage, int]], plan: Plan
) -> list[tuple[GrayPage, PageText]]:
    kept = {page.page: page for page in plan.kept}
    return [
        (paint(image, [r for r in plan.regions if r.page == index]), kept[index])
        for image, index in sources
    ]


def _grow(
    plan: Plan, pages: Sequence[PageText], found: Sequence[Found], policy: RedactionPolicy
) -> Plan:
    """The plan with every word a round found painted too, and its strings searched for."""
    regions = dict.fromkeys(plan.regions)
    for item in found:
        for tok in item.toks:
            pad = round(policy.padding * tok.height)
            box = (tok.x0 - pad, tok.y0 - pad, tok.x1 + pad, tok.y1 + pad)
            regions.setdefault(Region(tok.page, box, "recheck", item.kind))
    secrets = plan.secrets | {s for item in found for s in item.strings if len(normal(s)) >= 4}
    kept = kept_pages(pages, tuple(regions))
    return Plan(tuple(regions), frozenset(secrets), kept)
