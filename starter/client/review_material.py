"""What a reviewer is shown of one document: the fields read and the pages, as JSON.

Built from the review's references (``custody.reviews.ReviewStatus``): the
fields read and the page texts (the check's scratch copies, signed
references checked as every reader does) and the page images the review
rendered. Values and text are here because a reviewer must see them; the
caller hands this out only through an egress event (``starter.client.review.show``).
Pages and lines count from 1, as ``--line PAGE:LINE=TEXT`` does.
"""

from __future__ import annotations

import base64
from typing import Any

from custody.fields import Extraction
from custody.models import PageText
from custody.refs import RefKeys
from custody.reviews import REVIEW_DPI, ReviewStatus
from custody.stores import ObjectStore


def material(store: ObjectStore, review: ReviewStatus) -> dict[str, Any]:
    refs = RefKeys.for_store(store)
    sha, tenant = review.sha256, review.tenant
    keys = refs.check_all(review.text_keys, tenant, sha, review.text_sigs)
    pages = [PageText.model_validate_json(store.get(k)) for k in keys]
    return {
        "sha256": sha,
        "tenant": tenant,
        "reasons": review.reasons,
        "fields_needing_review": review.fields_needing_review,
        "waiting_since": review.waiting_since.isoformat(),
        "document_type": review.document_type,
        "fields": _fields(store, refs, review),
        "pages": [_page(store, review, p, n) for n, p in enumerate(pages, start=1)],
    }


def _fields(store: ObjectStore, refs: RefKeys, review: ReviewStatus) -> dict[str, Any]:
    if review.fields_key is None:
        return {}
    key = refs.check(review.fields_key, review.tenant, review.sha256, review.fields_sig)
    read = Extraction.model_validate_json(store.get(key))
    return {
        name: {
            "status": f.status,
            "value": f.value,
            "confidence": f.confidence,
            "page": None if f.page is None else f.page + 1,
            "box": f.box,
            "needs_review": name in review.fields_needing_review,
        }
        for name, f in sorted(read.fields.items())
    }


def _page(store: ObjectStore, review: ReviewStatus, page: PageText, n: int) -> dict[str, Any]:
    image = review.page_keys[n - 1] if n <= len(review.page_keys) else None
    png = store.get(image) if image is not None and store.exists(image) else None
    return {
        "page": n,
        "width": page.width,
        "height": page.height,
        "lines": page.text.split("\n"),
        "image_dpi": REVIEW_DPI,
        "image_png": base64.b64encode(png).decode() if png else None,
    }
