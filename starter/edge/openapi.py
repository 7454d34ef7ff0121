"""The OpenAPI 3 description of the intake edge, written by hand and served as is.

It states every constraint the server enforces, so a schema-valid request is
never refused for its shape (``tests/starter/edge/test_contract.py`` fuzzes a
real ``custody serve`` from it with Schemathesis). The patterns are the
server's own (:mod:`custody.ids`, :mod:`custody.egress`); the byte and page
maxima are the deployment's limits: :func:`document` states them for one
``PolicyLimits``, and :data:`SPEC` is the document for the default limits.
"""

from __future__ import annotations

from typing import Any

from custody.doctypes import TYPE_NAME
from custody.limits import PolicyLimits
from starter.edge.preview_spec import preview_path, preview_schemas
from starter.edge.read_spec import PURPOSE as READ_PURPOSE
from starter.edge.read_spec import result_schemas
from starter.edge.releases import MAX_DOCUMENTS
from starter.edge.review_spec import review_paths, review_schemas

# The server's regexes. Its `re.match` also lets a trailing newline past `$`,
# which no header value or path segment can carry.
SHA256 = "^[0-9a-f]{64}$"
SOURCE_ID = "^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"  # custody.ids._SOURCE_ID
NAME = "^[a-z0-9][a-z0-9_.-]{0,62}$"  # custody.egress._NAME: recipients, policies
RELEASE_ID = "^[0-9a-f]{32}$"
# str.isprintable() over what an HTTP header can carry (Latin-1): no controls,
# no NO-BREAK SPACE (U+00A0) or SOFT HYPHEN (U+00AD).
PRINTABLE = "^[\\x20-\\x7e\\xa1-\\xac\\xae-\\xff]{1,255}$"
_HEADERS = {
    "Idempotency-Key": "the upload's idempotency key (draft-ietf-httpapi-idempotency-key-header): "
    "a UUID is recommended (e.g. 8e03978e-40d5-43e8-bc93-6894a57f9324, as the draft's "
    "examples); any 1-255 printable characters are accepted and kept as sent. The same key "
    "with the same body replays the first answer; with another body it is 422 "
    "IDEMPOTENCY_KEY_REUSED, for that tenant, for as long as the key is remembered",
    "Custody-Source-Id": "the sending system, an identifier (never free text)",
    "Custody-Page-Count": "pages the sender expects; past the page limit is 413 PAGE_LIMIT",
    "Custody-Priority": "'high' (any case) uses the reserved lane, for tenants allowed to",
    "Custody-Document-Type": "the document's type (else Custody classifies it): a built-in "
    "type (form, receipt, referral) or one the tenant's fields policy configures (discharge "
    "is shipped configured); a name the tenant does not know is 422 UNKNOWN_TYPE",
}
_UUID_EXAMPLE = "8e03978e-40d5-43e8-bc93-6894a57f9324"
UPLOAD_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/tiff")


def _ref(schema: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{schema}"}


def _answer(description: str, schema: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": _ref(schema)}},
    }
    return out | {"headers": headers} if headers else out


def _error(description: str, retry_after: bool = False) -> dict[str, Any]:
    return _answer(description, "Error", _RETRY_AFTER if retry_after else None)


_LOCATION = {"Location": {"schema": {"type": "string"}}}
_RETRY_AFTER = {
    "Retry-After": {"description": "seconds", "schema": {"type": "integer", "minimum": 0}}
}


def _header(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "header", "description": _HEADERS[name], "schema": schema}


_AUTH = {
    "401": _error("missing or invalid API key (UNAUTHENTICATED)"),
    "403": _error(
        "revoked API key (KEY_REVOKED), or a key without this operation's scope "
        "(x-custody-scope; SCOPE_DENIED)"
    ),
}
_STORE = {
    "503": _error(
        "storage unavailable (STORE_UNAVAILABLE), or Temporal busy or down (UNREACHABLE)",
        retry_after=True,
    )
}


def _upload(limits: PolicyLimits) -> dict[str, Any]:
    return {
        "summary": "Submit one document (raw body); OCR runs asynchronously",
        "description": f"The body is at most {limits.max_bytes} bytes (413 TOO_LARGE), its "
        "first bytes must match Content-Type (415), and it must arrive at the edge's "
        "minimum rate (408 BODY_TOO_SLOW).",
        "security": [{"apiKey": []}],
        "x-custody-scope": "upload",
        "parameters": [
            _header(
                "Idempotency-Key",
                {"type": "string", "pattern": PRINTABLE, "example": _UUID_EXAMPLE},
            ),
            _header("Custody-Source-Id", {"type": "string", "pattern": SOURCE_ID}),
            _header(
                "Custody-Page-Count", {"type": "integer", "minimum": 1, "maximum": limits.max_pages}
            ),
            _header("Custody-Priority", {"type": "string"}),
            _header("Custody-Document-Type", {"type": "string", "pattern": TYPE_NAME}),
        ],
        "requestBody": {
            "required": True,
            "content": {
                t: {"schema": {"type": "string", "format": "binary"}} for t in UPLOAD_TYPES
            },
        },
        "responses": {
            "202": _answer(
                "accepted (or already known), or parked in the manual lane (state 'manual', "
                "no workflow) when the bounds are reached and the lane is on",
                "Accepted",
                _LOCATION,
            ),
            "400": _error(
                "malformed request: BAD_HEADER, BAD_SOURCE_ID, BAD_IDEMPOTENCY_KEY, "
                "LENGTH_MISMATCH, EMPTY"
            ),
            **_AUTH,
            "408": _error("the body arrived too slowly (BODY_TOO_SLOW)"),
            "413": _error("larger than the byte (TOO_LARGE) or page (PAGE_LIMIT) limit"),
            "415": _error("unsupported or mismatched content type (UNSUPPORTED_TYPE)"),
            "422": _error(
                "Idempotency-Key reused with a different body (IDEMPOTENCY_KEY_REUSED), or "
                "Custody-Document-Type names a type the tenant does not know (UNKNOWN_TYPE)"
            ),
            "429": _error(
                "admission bounds, rates, uploads in flight or the manual lane's share "
                "reached; retry later",
                retry_after=True,
            ),
            "503": _error(
                "admission paused by an operator (ADMISSION_PAUSED) or storage unavailable "
                "(STORE_UNAVAILABLE)",
                retry_after=True,
            ),
        },
    }


def _read(
    op_id: str,
    summary: str,
    param: tuple[str, str, str],
    ok: dict[str, Any],
    missing: str,
    scope: str = "read",
) -> dict[str, Any]:
    """A GET of one of the caller's things by its id in the path."""
    name, pattern, malformed = param
    schema = {"type": "string", "pattern": pattern}
    return {
        "get": {
            "operationId": op_id,
            "summary": summary,
            "security": [{"apiKey": []}],
            "x-custody-scope": scope,
            "parameters": [{"name": name, "in": "path", "required": True, "schema": schema}],
            "responses": {
                "200": ok,
                "400": _error(malformed),
                **_AUTH,
                "404": _error(missing),
                **_STORE,
            },
        }
    }


def _document_read() -> dict[str, Any]:
    """``GET /v1/documents/{sha256}``, with the read's purpose of disclosure as a query."""
    path = _read(
        "getDocument",
        "State, and the result once published, of the caller's document",
        ("sha256", SHA256, "not a SHA-256 (BAD_SHA256)"),
        _answer("state and result", "Document"),
        "no such document for this tenant (NOT_FOUND)",
    )
    schema = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": READ_PURPOSE}
    path["get"]["parameters"].append(
        {
            "name": "purpose",
            "in": "query",
            "required": False,
            "description": "the purpose of disclosure the read is recorded with (default: "
            "the tenant policy's); malformed is 400 BAD_REQUEST",
            "schema": schema,
        }
    )
    path["get"]["responses"]["400"] = _error("not a SHA-256 (BAD_SHA256), or a bad purpose")
    return path


def _paths(limits: PolicyLimits) -> dict[str, Any]:
    upload = _upload(limits)
    return {
        "/v1/documents": {
            "put": {**upload, "operationId": "putDocument"},
            "post": {**upload, "operationId": "postDocument"},
        },
        "/v1/documents/{sha256}": _document_read(),
        "/v1/preview": preview_path(limits),
        "/v1/releases": {
            "post": {
                "operationId": "postRelease",
                "summary": "Release published documents to a registered recipient (runs async)",
                "description": "The same request again joins the same release: its id derives "
                "from tenant, recipient, policy hash and documents.",
                "security": [{"apiKey": []}],
                "x-custody-scope": "release",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("ReleaseRequest")}},
                },
                "responses": {
                    "202": _answer("started (or joined): state 'running'", "Release", _LOCATION),
                    "400": _error("malformed body (BAD_REQUEST) or document hash (BAD_SHA256)"),
                    **_AUTH,
                    "404": _error("no such recipient or policy (RECIPIENT_UNKNOWN, ...)"),
                    "413": _error("a body past the edge's release request cap (TOO_LARGE)"),
                    "422": _error("refused: RECIPIENT_REVOKED, POLICY_INVALID, ..."),
                    "429": _error(
                        "the tenant's release rate (ADMISSION_TENANT_RATE) or running releases "
                        "(INFLIGHT_RELEASES) reached; retry later",
                        retry_after=True,
                    ),
                    **_STORE,
                },
            }
        },
        "/v1/releases/{release_id}": _read(
            "getRelease",
            "One of the caller's releases: running, delivered, refused or failed",
            ("release_id", RELEASE_ID, "not a release id (BAD_REQUEST)"),
            _answer("the release, with its files once delivered", "Release"),
            "no such release for this tenant (NOT_FOUND)",
            scope="release",
        ),
        **review_paths(),
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (a key with the admin scope)",
                "security": [{"apiKey": []}],
                "x-custody-scope": "admin",
                "responses": {
                    "200": {
                        "description": "text exposition",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    **_AUTH,
                    **_STORE,
                },
            }
        },
    }


def _object(required: str, **properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema; ``required`` names its required properties, space-separated."""
    return {"type": "object", "required": required.split(), "properties": properties}


_STR: dict[str, Any] = {"type": "string"}
_MAYBE_STR: dict[str, Any] = {"type": "string", "nullable": True}
_SHA = {"type": "string", "pattern": SHA256}
_FILE = {
    "type": "object",
    "properties": {"name": _STR, "sha256": _STR, "bytes": {"type": "integer"}},
}
SCHEMAS: dict[str, Any] = {
    "Error": _object("error message", error=_STR, message=_STR),
    "Accepted": _object(
        "sha256 state workflow_id deduplicated",
        sha256=_SHA,
        state=_STR,
        workflow_id=_MAYBE_STR,
        deduplicated={"type": "boolean"},
    ),
    "ReleaseRequest": _object(
        "documents recipient",
        documents={"type": "array", "minItems": 1, "maxItems": MAX_DOCUMENTS, "items": _SHA},
        recipient={"type": "string", "pattern": NAME},
        policy={"type": "string", "pattern": NAME, "default": "default"},
    ),
    "Release": _object(
        "release_id state recipient policy_sha256 files",
        release_id={"type": "string", "pattern": RELEASE_ID},
        state={"type": "string", "enum": ["running", "delivered", "refused", "failed"]},
        code=_MAYBE_STR,
        recipient=_STR,
        policy=_MAYBE_STR,
        policy_sha256=_STR,
        documents={"type": "array", "items": _STR},
        files={"type": "array", "items": _FILE},
    ),
    "Document": _object(
        "sha256 state",
        sha256=_SHA,
        state=_STR,
        code=_MAYBE_STR,
        pages={"type": "integer"},
        running={"type": "boolean"},
        # The text and the fields read, once published (read_spec); else null.
        result=_ref("Result"),
    ),
}


def document(limits: PolicyLimits) -> dict[str, Any]:
    """The OpenAPI document for an edge enforcing ``limits``."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Custody intake edge",
            "version": "1.2.0",
            "description": "Every operation needs its scope on the caller's API key "
            "(x-custody-scope: upload, read, release, review or admin); a key without it "
            "is answered 403 SCOPE_DENIED. Keys from before scopes hold legacy-all "
            "(every scope), which production refuses.",
        },
        "paths": _paths(limits),
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "schemas": SCHEMAS | preview_schemas(limits) | result_schemas() | review_schemas(),
        },
    }


SPEC: dict[str, Any] = document(PolicyLimits())
