"""The reviews' part of the OpenAPI document (``starter.edge.openapi``).

Built from the bounds the edge enforces (``starter.edge.review_body``) and the
fixed reject codes (``custody.reviews``), so a schema-valid decision is never
refused for its shape; Schemathesis checks the served edge against it.
"""

from __future__ import annotations

from typing import Any

from custody.reviews import reject_codes
from starter.edge.read_spec import PURPOSE
from starter.edge.review_body import MAX_FIELDS, MAX_LINES, MAX_TEXT
from starter.edge.reviews import CREDENTIAL_HEADER

_SHA256 = "^[0-9a-f]{64}$"
_TEXT = {"type": "string", "maxLength": MAX_TEXT}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_AUTH_CODES = (
    "missing or invalid API key (UNAUTHENTICATED), or no reviewer credential (OPERATOR_REQUIRED)"
)
_DENIED = (
    "revoked API key (KEY_REVOKED), a key without the review scope (SCOPE_DENIED), or a "
    "reviewer credential refused (OPERATOR_UNKNOWN, OPERATOR_REVOKED, OPERATOR_EXPIRED, "
    "ROLE_REQUIRED)"
)


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _errors(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {status: _json(why, _ref("Error")) for status, why in pairs}


def _credential(required: bool) -> dict[str, Any]:
    return {
        "name": CREDENTIAL_HEADER,
        "in": "header",
        "required": required,
        "description": "the reviewer's key file (as `custody operators add` wrote it), base64: "
        "the decision is signed with it and it is not kept",
        "schema": {"type": "string"},
    }


def _sha_param() -> dict[str, Any]:
    return {"name": "sha256", "in": "path", "required": True,
            "schema": {"type": "string", "pattern": _SHA256}}  # fmt: skip


def _purpose() -> dict[str, Any]:
    """The hand-out's purpose of disclosure, as ``GET /v1/documents/{sha256}`` takes it."""
    schema = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": PURPOSE}
    return {"name": "purpose", "in": "query", "required": False, "schema": schema,
            "description": "the purpose of disclosure the hand-out is recorded with "
            "(default: the tenant policy's)"}  # fmt: skip


def review_paths() -> dict[str, Any]:
    common = _errors(("401", _AUTH_CODES), ("403", _DENIED))
    store = _errors(("503", "storage unavailable (STORE_UNAVAILABLE), or no worker took it"))
    missing = ("404", "not waiting in review for this tenant (NOT_IN_REVIEW)")
    decided = ("409", "its review was decided already (ALREADY_DECIDED)")
    base = {"security": [{"apiKey": []}], "x-custody-scope": "review"}
    return {
        "/v1/reviews": {"get": base | {
            "operationId": "listReviews",
            "summary": "The tenant's documents waiting for a person, oldest first",
            "responses": {"200": _json("the queue", {"type": "array",
                                                     "items": _ref("ReviewWaiting")}),
                          **common, **store},
        }},
        "/v1/reviews/{sha256}": {
            "get": base | {
                "operationId": "getReview",
                "summary": "What a reviewer needs: fields with boxes, pages with lines and "
                "images (an egress event of kind review)",
                "parameters": [_sha_param(), _credential(False), _purpose()],
                "responses": {"200": _json("fields and pages", _ref("ReviewMaterial")),
                              **_errors(("400", "not a SHA-256 (BAD_SHA256), or a bad "
                                                "purpose (BAD_REQUEST)"), missing,
                                        decided), **common, **store},
            },
            "post": base | {
                "operationId": "decideReview",
                "summary": "Approve (as read or corrected) or reject, as a named reviewer",
                "parameters": [_sha_param(), _credential(True)],
                "requestBody": {"required": True, "content": {
                    "application/json": {"schema": _ref("ReviewDecision")}}},
                "responses": {"200": _json("the decision took effect", _ref("ReviewAnswer")),
                              **_errors(("400", "malformed body (BAD_REQUEST) or SHA-256"),
                                        missing, decided,
                                        ("413", "a body past 256 KiB (TOO_LARGE)"),
                                        ("422", "a decision the document refuses: a reject "
                                         "without its code or with corrections, a line past "
                                         "its pages (DECISION_INVALID, USAGE)")),
                              **common, **store},
            },
        },
    }  # fmt: skip


def review_schemas() -> dict[str, Any]:
    line = {
        "type": "object",
        "additionalProperties": False,
        "required": ["page", "line", "text"],
        "properties": {
            "page": {"type": "integer", "minimum": 1},
            "line": {"type": "integer", "minimum": 1},
            "text": _TEXT,
        },
    }
    waiting = {
        "sha256": {"type": "string"},
        "tenant": {"type": "string", "nullable": True},
        "reasons": _STRINGS,
        "fields_needing_review": _STRINGS,
        "waiting_since": {"type": "string"},
    }
    return {
        "ReviewWaiting": {"type": "object", "required": list(waiting), "properties": waiting},
        "ReviewMaterial": {"type": "object", "required": [*waiting, "fields", "pages"],
                           "properties": waiting | {"fields": {"type": "object"},
                                                    "pages": {"type": "array"}}},
        "ReviewDecision": {"type": "object", "additionalProperties": False,
                           "required": ["verdict"], "properties": {
            "verdict": {"type": "string", "enum": ["approve", "reject"]},
            "reject_code": {"type": "string", "enum": [*reject_codes(), None],
                            "nullable": True},
            "fields": {"type": "object", "maxProperties": MAX_FIELDS,
                       "additionalProperties": _TEXT},
            "lines": {"type": "array", "maxItems": MAX_LINES, "items": line},
            "note": {**_TEXT, "nullable": True},
        }},
        "ReviewAnswer": {"type": "object", "required": ["state", "reviewed_by"],
                         "properties": {"state": {"type": "string"},
                                        "reviewed_by": {"type": "string"}}},
    }  # fmt: skip
