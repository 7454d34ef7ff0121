"""One document's redacted view from its page images and recognised words, checked.

Kept apart from the store, so the service, the release and the benchmark all
make views the same way: plan, paint, rebuild, check. A view that fails its
check raises ``RedactionLeak`` and is never returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from activities.engines.base import OcrEngine
from activities.pages.raster import GrayPage
from activities.redact.check import CheckReport, Surfaces, read_surfaces, report
from activities.redact.paint import build_pdf, paint
from activities.redact.plan import Plan, make_plan
from activities.redact.policy import RedactionPolicy
from custody.errors import RedactionLeak, RenderFailed
from custody.fields import Extraction
from custody.models import PageText


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
) -> Made:
    """The view, checked for every string its plan removed."""
    plan = make_plan(pages, extraction, policy)
    kept = {page.page: page for page in plan.kept}
    painted = []
    for index, image in images:
        words = kept.get(index)
        if words is None or image.shape != (words.height, words.width):
            raise RenderFailed(f"page {index + 1} differs from the page OCR read")
        painted.append((paint(image, [r for r in plan.regions if r.page == index]), words))
    if len(painted) != len(pages):
        raise RenderFailed("the source has another page count than its record")
    pdf = build_pdf(painted, dpi)
    surfaces = read_surfaces(pdf, engine, dpi)
    checked = report(surfaces, plan.secrets)
    if not checked.clean:
        raise RedactionLeak(detail=f"found in {', '.join(checked.leaks)}")
    text = "\n\n".join(page.text for page in plan.kept)
    return Made(pdf, text, plan, checked, surfaces)
