"""The preview's part of the OpenAPI document (``starter.edge.openapi``).

The limits it states are the ones the edge and the OCR workers enforce
(``custody.previews``); building the document loads no engine or sandbox code.
"""

from __future__ import annotations

from typing import Any

from custody.limits import PolicyLimits
from custody.previews import max_side, preview_limits

PREVIEW_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/tiff")


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
            "byte (CUSTODY_PREVIEW_DEADLINE_S), else 504 PREVIEW_TIMEOUT. The page is "
            "read on the OCR workers; nothing is kept: no document workflow, no stored "
            "object (the scratch copies are deleted), no ledger entry.",
            "security": [{"apiKey": []}],
            "x-custody-scope": "upload",
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
                "403": _error("revoked API key (KEY_REVOKED) or no upload scope (SCOPE_DENIED)"),
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
