"""``POST /v1/preview``: one small document read back at once, as evidence of nothing.

The answer is the text and per-word confidences and boxes the configured
engine reads, marked ``"evidentiary": false`` (and ``Custody-Evidentiary:
false``): no workflow starts, nothing is written to the object store or the
ledger, and the staged body is deleted on every path. It is the caller's own
bytes read back to the caller, so no egress event is written either; the text
never reaches a log line, a metric or an exception message.

The limits are the intake policy's, tightened (``preview_spec.preview_limits``): at
most 10 MB, 2 pages and 10,000 px a side as rendered for OCR. The intake rules
themselves (type, encryption, active content, pixel bombs) run in the
sandboxed child exactly as for a submitted document, then the pages are
rendered there too (:mod:`starter.edge.preview_lane`). The deadline runs from
the body's last byte to the answer (``CUSTODY_PREVIEW_DEADLINE_S``): past it
the answer is 504 ``PREVIEW_TIMEOUT`` and the work is told to stop.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog
from prometheus_client import Histogram
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from activities.engines.base import OcrEngine
from activities.engines.selection import build_engine
from activities.scratch import StagingArea
from custody.errors import Code, DocumentRejected, UploadError
from custody.models import PageText
from custody.settings import Settings
from starter.edge import metrics, tenants
from starter.edge.inflight import InFlight
from starter.edge.preview_lane import PreviewLane
from starter.edge.preview_spec import preview_limits
from starter.edge.upload import SUPPORTED, Pace, Staged, paced, stage_body

HEADERS = {"Custody-Evidentiary": "false", "Cache-Control": "no-store"}
#: What a client is told to wait after the engine or the sandbox failed.
FAILED_RETRY_S = 5.0
_DIGITS = re.compile(r"[0-9]{1,18}")
_LOG = structlog.get_logger("custody.edge.preview")
#: How a refusal of the bytes maps to HTTP: over a limit, the wrong type, or unreadable.
_STATUS = {
    Code.TOO_LARGE: 413,
    Code.PAGE_LIMIT: 413,
    Code.PIXEL_LIMIT: 413,
    Code.EMPTY: 400,
    Code.UNSUPPORTED_TYPE: 415,
}
SECONDS = Histogram(
    "custody_preview_seconds",
    "Time from a preview's request to the edge's answer, by HTTP status",
    ["status"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60),
    registry=metrics.REGISTRY,
)

Tenant = Callable[[Request], tenants.Tenant]
ErrorAnswer = Callable[..., JSONResponse]


class Preview:
    """The preview route, bound to the edge's staging area, upload caps and tenants."""

    def __init__(
        self,
        settings: Settings,
        area: StagingArea,
        tenant: Tenant,
        error: ErrorAnswer,
        inflight: InFlight,
        lane: PreviewLane | None = None,
    ) -> None:
        self.area, self._tenant, self._error, self.inflight = area, tenant, error, inflight
        self.deadline_s = settings.preview_deadline_s
        self.limits = preview_limits(settings.limits, self.deadline_s)
        self.pace = Pace(settings.edge_min_body_bytes, settings.edge_body_window_s)
        self.lane = lane or PreviewLane(
            settings.preview_concurrency,
            settings.preview_queue,
            lambda: build_engine(settings),
            self.deadline_s,
        )

    async def post(self, request: Request) -> Response:
        started = time.perf_counter()
        response = await self._post(request)
        SECONDS.labels(str(response.status_code)).observe(time.perf_counter() - started)
        return response

    async def _post(self, request: Request) -> Response:
        staged: Staged | None = None
        try:
            tenant = self._tenant(request)
            length = self._check_headers(request)
            self.lane.check()  # before the body: a full lane costs the client no upload
            with self.inflight.opened(tenant.name, length) as ticket:
                staged = await stage_body(
                    paced(request.stream(), self.pace),
                    self.area,
                    declared=length,
                    max_bytes=self.limits.max_bytes,
                    ticket=ticket,
                )
            self._check_body(request, staged)
            pages, engine = await self._recognise(staged)
        except UploadError as err:
            return self._error(err.status, err.code, err.message, err.retry_after)
        except DocumentRejected as err:
            return self._error(_STATUS.get(err.code, 422), err.code, err.detail)
        finally:
            if staged is not None:
                staged.path.unlink(missing_ok=True)
        return JSONResponse(_answer(staged, pages, engine), headers=HEADERS)

    def _check_headers(self, request: Request) -> int | None:
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type not in SUPPORTED:
            raise UploadError(
                415, Code.UNSUPPORTED_TYPE, f"Content-Type must be one of {sorted(SUPPORTED)}"
            )
        raw = request.headers.get("content-length")
        # ASCII digits, bounded: int() would read "٣" and refuse 5,000 digits (a 500).
        length = int(raw) if raw is not None and _DIGITS.fullmatch(raw) else None
        if raw is not None and length is None:
            raise UploadError(400, Code.BAD_HEADER, "Content-Length must be an integer >= 0")
        if length is not None and length > self.limits.max_bytes:
            raise UploadError(413, Code.TOO_LARGE, f"more than {self.limits.max_bytes} bytes")
        return length

    def _check_body(self, request: Request, staged: Staged) -> None:
        if staged.size == 0:
            raise UploadError(400, Code.EMPTY, "empty body")
        declared = request.headers["content-type"].split(";")[0].strip().lower()
        if staged.media_type != declared:
            raise UploadError(415, Code.UNSUPPORTED_TYPE, "content does not match Content-Type")

    async def _recognise(self, staged: Staged) -> tuple[list[PageText], OcrEngine]:
        stop = threading.Event()
        deadline = asyncio.timeout(self.deadline_s)
        try:
            async with deadline:
                return await self.lane.recognise(staged.path, staged.media_type, self.limits, stop)
        except (UploadError, DocumentRejected):
            raise
        except Exception as err:
            if deadline.expired():
                stop.set()  # the work ends before its next page and gives its place back
                raise UploadError(
                    504, Code.PREVIEW_TIMEOUT, f"no answer within {self.deadline_s:g} s"
                ) from None
            # The engine or the sandbox failed: transient. Only the type is logged:
            # a decoder's or an engine's message could quote the page.
            _LOG.warning("preview_failed", error=type(err).__name__)
            raise UploadError(
                503, Code.OCR_ERROR, "the preview failed; retry later", FAILED_RETRY_S
            ) from None


def _answer(staged: Staged, pages: list[PageText], engine: OcrEngine) -> dict[str, Any]:
    return {
        "evidentiary": False,
        "notice": "preview only: not stored, not signed, not in the ledger",
        "sha256": staged.sha256,
        "media_type": staged.media_type,
        "engine": {"name": engine.name, "version": engine.version},
        "pages": [p.model_dump(include=_PAGE_FIELDS) for p in pages],
    }


_PAGE_FIELDS = {"page", "width", "height", "text", "words", "mean_confidence", "seconds"}
