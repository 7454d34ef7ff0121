"""The page images a reviewer looks at, rendered once, when a document enters review.

Rendered from the source in the sandboxed child (``iter_pages_sandboxed``), as
OCR's pages are: this worker never decodes a byte of the source itself. Each
page is kept as a PNG in the store (sealed like every object,
``reviews/<tenant>/<sha256>/page-NNNN.png``), at ``REVIEW_DPI``; history gets
the keys only. ``custody review show`` and the review page hand them out, as
an egress event of kind ``review``.
"""

from __future__ import annotations

import io

from PIL import Image
from temporalio import activity

from activities.faults import coded
from activities.inspect.sandboxed import iter_pages_sandboxed
from activities.scratch import StagingArea
from custody.errors import Code
from custody.refs import RefKeys
from custody.reviews import REVIEW_DPI, ReviewPagesInput, ReviewPagesResult, page_image_key
from custody.settings import Limits
from custody.stores import ObjectStore


class ReviewPages:
    def __init__(self, store: ObjectStore, area: StagingArea, limits: Limits) -> None:
        self._store, self._area, self._limits = store, area, limits
        self._refs = RefKeys.for_store(store)

    @activity.defn(name="custody.review_pages")
    @coded(Code.STORE_UNAVAILABLE)
    def render(self, inp: ReviewPagesInput) -> ReviewPagesResult:
        source = self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        keys = [page_image_key(inp.sha256, inp.tenant, n + 1) for n in range(inp.pages)]
        if all(self._store.exists(k) for k in keys):  # an earlier attempt finished
            return ReviewPagesResult(keys=keys, attempt=activity.info().attempt)
        with self._area.staged(self._store, source, inp.sha256) as path:
            pages = iter_pages_sandboxed(path, inp.media_type, REVIEW_DPI, 0, self._limits)
            for index, image in pages:
                if index < len(keys):
                    self._store.put(keys[index], _png(image))
        return ReviewPagesResult(keys=keys, attempt=activity.info().attempt)


def _png(image: object) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG", optimize=True)  # type: ignore[arg-type]
    return out.getvalue()
