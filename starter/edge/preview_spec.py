"""The preview's limits and its part of the OpenAPI document (``starter.edge.openapi``).

Light on purpose: the contract and the route read the same numbers here, and
building the document loads no engine or sandbox code.
"""

from __future__ import annotations

from typing import Any, TypeVar

from custody.limits import PolicyLimits

MAX_BYTES = 10 * 1024 * 1024
MAX_PAGES = 2
MAX_SIDE_PX = 10_000
PREVIEW_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/tiff")

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


def _error(description: str, retry_after: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if retry_after:
        seconds = {"description": "seconds", "schema": {"type": "integer", "minimum": 0}}
        out["headers"] = {"Retry-After": seconds}
    return out


def preview_path(limits: PolicyLimits) -> dict[str, Any]:
    """``POST /v1/preview``, stating the limits a deployment with ``limits`` enforces."""
    held = preview_limits(limits)
    ok_headers = {
        "Custody-Evidentiary": {"schema": {"type": "string", "enum": ["false"]}},
        "Cache-Control": {"schema": {"type": "string", "enum": ["no-store"]}},
    }
    return {
        "post": {
            "operationId": "postPreview",
            "summary": "Read one small document now (raw body); the answer is not evidence",
            "description": f"At most {held.max_bytes} bytes (413 TOO_LARGE), "
            f"{held.max_pages} pages (413 PAGE_LIMIT) and {max_side(held)} px a side "
            "as rendered for OCR (413 PIXEL_LIMIT), under every other intake rule. "
            "The answer comes within the deployment's deadline after the body's last "
            "byte (CUSTODY_PREVIEW_DEADLINE_S), else 504 PREVIEW_TIMEOUT. Nothing is "
            "kept: no workflow, no stored object, no ledger entry.",
            "security": [{"apiKey": []}],
            "requestBody": {
                "required": True,
                "content": {
                    t: {"schema": {"type": "string", "format": "binary"}} for t in PREVIEW_TYPES
                },
            },
            "responses": {
                "200": {
                    "description": "the text, non-evidentiary",
                    "headers": ok_headers,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Preview"}}
                    },
                },
                "400": _error("malformed request: BAD_HEADER, LENGTH_MISMATCH, EMPTY"),
                "401": _error("missing or invalid API key (UNAUTHENTICATED)"),
                "403": _error("revoked API key (KEY_REVOKED)"),
                "408": _error("the body arrived too slowly (BODY_TOO_SLOW)"),
                "413": _error("over the byte, page or pixel limit (TOO_LARGE, PAGE_LIMIT, ...)"),
                "415": _error("unsupported or mismatched content type (UNSUPPORTED_TYPE)"),
                "422": _error("refused by an intake rule: CORRUPT, ENCRYPTED, DECODE_LIMIT, ..."),
                "429": _error("the preview lane or uploads in flight are full", retry_after=True),
                "503": _error("OCR failed (OCR_ERROR) or storage unavailable", retry_after=True),
                "504": _error("no answer within the deadline (PREVIEW_TIMEOUT)"),
            },
        }
    }


def _object(required: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": required.split(), "properties": properties}


_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer", "minimum": 0}
_SHARE: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
_POINT = {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "integer"}}


def preview_schemas(limits: PolicyLimits) -> dict[str, Any]:
    """The answer's schemas: the pages a deployment with ``limits`` can return."""
    word = _object(
        "text confidence box",
        text=_STR,
        confidence=_SHARE,
        box={"type": "array", "items": _POINT},
    )
    page = _object(
        "page width height text words mean_confidence seconds",
        page=_INT,
        width=_INT,
        height=_INT,
        text=_STR,
        words={"type": "array", "items": word},
        mean_confidence=_SHARE,
        seconds={"type": "number", "minimum": 0},
    )
    pages = {"type": "array", "minItems": 1, "maxItems": preview_limits(limits).max_pages}
    preview = _object(
        "evidentiary notice sha256 media_type engine pages",
        evidentiary={"type": "boolean", "enum": [False]},
        notice=_STR,
        sha256={"type": "string", "pattern": "^[0-9a-f]{64}$"},
        media_type={"type": "string", "enum": list(PREVIEW_TYPES)},
        engine=_object("name version", name=_STR, version=_STR),
        pages=pages | {"items": page},
    )
    return {"Preview": preview}
