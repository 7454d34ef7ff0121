"""A preview's contract: its limits, its scratch objects, its workflow's input and result.

``POST /v1/preview`` is read where OCR runs: the edge writes the body to a
scratch object, starts a short ``PreviewWorkflow`` (on the I/O queue) whose
one activity runs on the OCR workers' queue, and reads the pages the activity
wrote to a second scratch object; then it deletes both. History carries the
keys, the hash, counts and the engine's name, never the text: that stays in
the (sealed) store for the seconds between the activity and the edge.

Light on purpose: the edge, the workflow (through the sandbox) and the
activity all read this module, so it imports nothing heavy.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field

from custody import ids
from custody.limits import PolicyLimits
from custody.queues import OCR_TASK_QUEUE

__all__ = [
    "MAX_BYTES",
    "MAX_PAGES",
    "MAX_SIDE_PX",
    "PREVIEW_WORKFLOW_NAME",
    "PreviewInput",
    "PreviewResult",
    "max_side",
    "preview_limits",
    "preview_prefix",
]

PREVIEW_WORKFLOW_NAME = "PreviewWorkflow"
MAX_BYTES = 10 * 1024 * 1024
MAX_PAGES = 2
MAX_SIDE_PX = 10_000

L = TypeVar("L", bound=PolicyLimits)


def preview_limits(limits: L, deadline_s: float | None = None) -> L:
    """The deployment's intake policy held to the preview's limits (never loosened)."""
    update: dict[str, Any] = {
        "max_bytes": min(limits.max_bytes, MAX_BYTES),
        "max_pages": min(limits.max_pages, MAX_PAGES),
        # The side limit of a PDF page, checked before it is rendered.
        "max_page_inches": min(limits.max_page_inches, MAX_SIDE_PX / limits.ocr_dpi),
    }
    if deadline_s is not None:  # no render may outlive the answer
        update["decode_timeout_s"] = min(limits.decode_timeout_s, deadline_s)
    return limits.model_copy(update=update)


def max_side(limits: PolicyLimits) -> int:
    """The longest page side a preview takes, in pixels as rendered for OCR."""
    return round(limits.max_page_inches * limits.ocr_dpi)


def preview_prefix(sha256: str, tenant: str | None, preview_id: str) -> str:
    """One preview's scratch folder: under its document's ``work/`` (so signed references
    check, and scratch expiry removes what a crashed edge left), apart from OCR's attempts."""
    return f"{ids.work_prefix(sha256, tenant)}preview-{preview_id}/"


class PreviewInput(BaseModel):
    """What the edge asks: the staged body's scratch key (signed) and the time left."""

    preview_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    sha256: str
    tenant: str | None
    media_type: str
    source_key: str
    source_sig: str | None = None
    #: Seconds left of the edge's deadline when it started the workflow.
    deadline_s: float = Field(gt=0)
    ocr_task_queue: str = OCR_TASK_QUEUE

    @property
    def pages_key(self) -> str:
        """Where the activity writes the pages (text, words, boxes) for the edge to read."""
        return f"{preview_prefix(self.sha256, self.tenant, self.preview_id)}pages.json"


class PreviewResult(BaseModel):
    """What the activity answers: where the pages are, how many, and who read them."""

    pages_key: str
    pages: int
    engine: str
    engine_version: str
