"""The OpenAPI 3 description of the intake edge, written by hand and served as is."""

from __future__ import annotations

from typing import Any

_ERROR = {"$ref": "#/components/schemas/Error"}


def _ref(schema: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{schema}"}


def _error(description: str, retry_after: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": _ERROR}},
    }
    if retry_after:
        out["headers"] = {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}
    return out


def _header(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": False,
        "description": description,
        "schema": schema,
    }


_UPLOAD: dict[str, Any] = {
    "summary": "Submit one document (raw body); OCR runs asynchronously",
    "security": [{"apiKey": []}],
    "parameters": [
        _header(
            "Idempotency-Key",
            "same key and body replays the first answer",
            {"type": "string", "maxLength": 255},
        ),
        _header("Custody-Source-Id", "the sending system, an identifier", {"type": "string"}),
        _header(
            "Custody-Page-Count", "pages the sender expects", {"type": "integer", "minimum": 1}
        ),
        _header(
            "Custody-Priority",
            "'high' uses the reserved lane (tenants allowed to)",
            {"type": "string"},
        ),
    ],
    "requestBody": {
        "required": True,
        "content": {
            t: {"schema": {"type": "string", "format": "binary"}}
            for t in ("application/pdf", "image/png", "image/jpeg", "image/tiff")
        },
    },
    "responses": {
        "202": {
            "description": "accepted (or already known), or parked in the manual lane "
            "(state 'manual', no workflow) when the bounds are reached and the lane is on",
            "headers": {"Location": {"schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Accepted"}}},
        },
        "400": _error("malformed request"),
        "401": _error("missing or invalid API key"),
        "403": _error("revoked API key"),
        "413": _error("larger than the byte or page limit"),
        "415": _error("unsupported or mismatched content type"),
        "422": _error("Idempotency-Key reused with a different body"),
        "429": _error("admission bounds reached; retry later", retry_after=True),
        "503": _error(
            "admission paused by an operator (ADMISSION_PAUSED) or storage unavailable "
            "(STORE_UNAVAILABLE)",
            retry_after=True,
        ),
    },
}

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Custody intake edge", "version": "1.0.0"},
    "paths": {
        "/v1/documents": {
            "put": {**_UPLOAD, "operationId": "putDocument"},
            "post": {**_UPLOAD, "operationId": "postDocument"},
        },
        "/v1/documents/{sha256}": {
            "get": {
                "operationId": "getDocument",
                "summary": "State, and the result once published, of the caller's document",
                "security": [{"apiKey": []}],
                "parameters": [
                    {
                        "name": "sha256",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "state and result",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/Document"}
                            }
                        },
                    },
                    "400": _error("not a SHA-256"),
                    "401": _error("missing or invalid API key"),
                    "403": _error("revoked API key"),
                    "404": _error("no such document for this tenant"),
                    "503": _error("storage unavailable (STORE_UNAVAILABLE)", retry_after=True),
                },
            }
        },
        "/v1/releases": {
            "post": {
                "operationId": "postRelease",
                "summary": "Release published documents to a registered recipient (runs async)",
                "description": "The same request again joins the same release: its id derives "
                "from tenant, recipient, policy hash and documents.",
                "security": [{"apiKey": []}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("ReleaseRequest")}},
                },
                "responses": {
                    "202": {
                        "description": "started (or joined): state 'running'",
                        "headers": {"Location": {"schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": _ref("Release")}},
                    },
                    "400": _error("malformed body (BAD_REQUEST) or document hash (BAD_SHA256)"),
                    "401": _error("missing or invalid API key"),
                    "403": _error("revoked API key"),
                    "404": _error("no such recipient or policy (RECIPIENT_UNKNOWN, ...)"),
                    "422": _error("refused: RECIPIENT_REVOKED, POLICY_INVALID, ..."),
                    "503": _error("storage unavailable (STORE_UNAVAILABLE)", retry_after=True),
                },
            }
        },
        "/v1/releases/{release_id}": {
            "get": {
                "operationId": "getRelease",
                "summary": "One of the caller's releases: running, delivered, refused or failed",
                "security": [{"apiKey": []}],
                "parameters": [
                    {
                        "name": "release_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "the release, with its files once delivered",
                        "content": {"application/json": {"schema": _ref("Release")}},
                    },
                    "400": _error("not a release id"),
                    "401": _error("missing or invalid API key"),
                    "403": _error("revoked API key"),
                    "404": _error("no such release for this tenant"),
                },
            }
        },
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (any tenant's API key)",
                "security": [{"apiKey": []}],
                "responses": {
                    "200": {"description": "text exposition"},
                    "401": _error("missing or invalid API key"),
                    "403": _error("revoked API key"),
                },
            }
        },
    },
    "components": {
        "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error", "message"],
                "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
            },
            "Accepted": {
                "type": "object",
                "required": ["sha256", "state", "workflow_id", "deduplicated"],
                "properties": {
                    "sha256": {"type": "string"},
                    "state": {"type": "string"},
                    "workflow_id": {"type": "string", "nullable": True},
                    "deduplicated": {"type": "boolean"},
                },
            },
            "ReleaseRequest": {
                "type": "object",
                "required": ["documents", "recipient"],
                "properties": {
                    "documents": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 100,
                        "items": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    },
                    "recipient": {"type": "string"},
                    "policy": {"type": "string", "default": "default"},
                },
            },
            "Release": {
                "type": "object",
                "required": ["release_id", "state", "recipient", "policy_sha256", "files"],
                "properties": {
                    "release_id": {"type": "string"},
                    "state": {
                        "type": "string",
                        "enum": ["running", "delivered", "refused", "failed"],
                    },
                    "code": {"type": "string", "nullable": True},
                    "recipient": {"type": "string"},
                    "policy": {"type": "string", "nullable": True},
                    "policy_sha256": {"type": "string"},
                    "documents": {"type": "array", "items": {"type": "string"}},
                    "files": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "sha256": {"type": "string"},
                                "bytes": {"type": "integer"},
                            },
                        },
                    },
                },
            },
            "Document": {
                "type": "object",
                "required": ["sha256", "state"],
                "properties": {
                    "sha256": {"type": "string"},
                    "state": {"type": "string"},
                    "code": {"type": "string", "nullable": True},
                    "pages": {"type": "integer"},
                    "running": {"type": "boolean"},
                    "result": {"type": "object", "nullable": True},
                },
            },
        },
    },
}
