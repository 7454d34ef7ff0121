"""``POST /v1/preview``: one small document read back at once, as evidence of nothing.

The answer is the text and per-word confidences and boxes the configured
engine reads, marked ``"evidentiary": false`` (and ``Custody-Evidentiary:
false``): no document workflow starts, nothing is kept in the object store or
the ledger, and the staged body is deleted on every path. It is the caller's
own bytes read back to the caller, so no egress event is written either; the
text never reaches a log line, a metric, an exception message or a workflow
history.

The reading happens where OCR runs, not here (:mod:`starter.edge.preview_work`):
the body goes to a scratch object, a short ``PreviewWorkflow`` runs the
preview activity on the OCR workers (the intake rules and the rendering in the
sandboxed child, then the worker's engine), and the pages come back through a
second scratch object; both are deleted when the work ends. The edge keeps
the preview's bounds (:mod:`starter.edge.preview_lane`) before starting it.

The limits are the intake policy's, tightened (``custody.previews.preview_limits``):
at most 10 MB, 2 pages and 10,000 px a side as rendered for OCR. The deadline
runs from the body's last byte to the answer (``CUSTODY_PREVIEW_DEADLINE_S``):
past it the answer is 504 ``PREVIEW_TIMEOUT`` and the work stops before its
next page.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

import structlog
from prometheus_client import Histogram
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from temporalio.client import WorkflowFailureError

from activities.scratch import StagingArea
from custody.errors import REJECT_CODES, Code, UploadError
from custody.models import PageText
from custody.previews import PreviewResult, preview_limits
from custody.stores import StoreUnavailable
from starter.client.connect import CustodyClient
from starter.client.failures import failure_of
from starter.edge import metrics, tenants
from starter.edge.inflight import InFlight
from starter.edge.preview_lane import PreviewLane
from starter.edge.preview_work import read_on_workers
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
    """The preview route, bound to the edge's client, staging area, upload caps and tenants."""

    def __init__(
        self,
        client: CustodyClient,
        area: StagingArea,
        tenant: Tenant,
        error: ErrorAnswer,
        inflight: InFlight,
    ) -> None:
        self.client, self.area, self.inflight = client, area, inflight
        self._tenant, self._error = tenant, error
        settings = client.settings
        self.deadline_s = settings.preview_deadline_s
        self.limits = preview_limits(settings.limits, self.deadline_s)
        self.pace = Pace(settings.edge_min_body_bytes, settings.edge_body_window_s)
        self.lane = PreviewLane(
            settings.preview_concurrency, settings.preview_queue, self.deadline_s
        )

    def routes(self) -> list[Route]:
        return [Route("/v1/preview", self.post, methods=["POST"])]

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
            pages, engine = await self._recognise(staged, tenant)
        except UploadError as err:
            return self._error(err.status, err.code, err.message, err.retry_after)
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

    async def _recognise(
        self, staged: Staged, tenant: tenants.Tenant
    ) -> tuple[list[PageText], PreviewResult]:
        ends = asyncio.get_running_loop().time() + self.deadline_s
        self.lane.enter()  # 429 when full; given back when the work ends, not the request
        began = time.monotonic()
        work = asyncio.ensure_future(read_on_workers(self.client, staged, tenant.name, ends))
        work.add_done_callback(lambda done: self.lane.leave(_took(done, began)))
        deadline = asyncio.timeout_at(ends)
        try:
            async with deadline:
                # Shielded: past the deadline the work still ends, cleans up, frees its place.
                return await asyncio.shield(work)
        except WorkflowFailureError as err:
            code, message = failure_of(err, timeout=Code.PREVIEW_TIMEOUT, default=Code.OCR_ERROR)
            raise _refusal(code, message) from None
        except StoreUnavailable:
            raise  # the app answers 503 STORE_UNAVAILABLE, as on every route
        except Exception as err:
            if deadline.expired():
                raise UploadError(
                    504, Code.PREVIEW_TIMEOUT, f"no answer within {self.deadline_s:g} s"
                ) from None
            # Temporal or the workers failed: transient. Only the type is logged.
            _LOG.warning("preview_failed", error=type(err).__name__)
            raise UploadError(
                503, Code.OCR_ERROR, "the preview failed; retry later", FAILED_RETRY_S
            ) from None


def _took(work: asyncio.Future[Any], began: float) -> float | None:
    """The seconds a preview took when it answered with pages; None when it did not."""
    if work.cancelled() or work.exception() is not None:  # retrieved: never "unhandled"
        return None
    return time.monotonic() - began


def _refusal(code: Code, message: str) -> UploadError:
    """How the workers' refusal of the bytes, or their failure, answers over HTTP."""
    if code is Code.PREVIEW_TIMEOUT:
        return UploadError(504, code, message)
    if code in REJECT_CODES:
        return UploadError(_STATUS.get(code, 422), code, message)
    _LOG.warning("preview_failed", error=code.value)
    return UploadError(503, Code.OCR_ERROR, "the preview failed; retry later", FAILED_RETRY_S)


def _answer(staged: Staged, pages: list[PageText], engine: PreviewResult) -> dict[str, Any]:
    return {
        "evidentiary": False,
        "notice": "preview only: not stored, not signed, not in the ledger",
        "sha256": staged.sha256,
        "media_type": staged.media_type,
        "engine": {"name": engine.engine, "version": engine.engine_version},
        "pages": [p.model_dump(include=_PAGE_FIELDS) for p in pages],
    }


_PAGE_FIELDS = {"page", "width", "height", "text", "words", "mean_confidence", "seconds"}
