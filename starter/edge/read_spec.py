"""The published result's part of the OpenAPI document: text, pages and the fields read.

``GET /v1/documents/{sha256}`` answers ``result`` once a document is
published (``starter.edge.read``); its ``fields`` are keyed by field name,
each a ``Field``: ``state`` value, review or missing, the ``value`` only in
state value (a string, or a boolean for a tick or consent), how sure it is,
and its page and box. Schemathesis checks real answers against these.
"""

from __future__ import annotations

from typing import Any

#: A read's purpose of disclosure over HTTP (``?purpose=``): printable ASCII, not only
#: spaces, 1-200 characters (``starter.edge.read.purpose`` enforces exactly this).
PURPOSE = "^ *[\\x21-\\x7e][\\x20-\\x7e]*$"
_NUMBER = {"type": "number", "minimum": 0, "maximum": 1}
_MAYBE_INT = {"type": "integer", "nullable": True}


def result_schemas() -> dict[str, Any]:
    field = {
        "type": "object",
        "required": ["state", "value", "confidence", "page", "box"],
        "properties": {
            "state": {"type": "string", "enum": ["value", "review", "missing"]},
            "value": {
                "anyOf": [
                    {"type": "string", "nullable": True},
                    {"type": "boolean", "nullable": True},
                ]
            },
            "confidence": _NUMBER,
            "page": _MAYBE_INT,
            "box": {
                "type": "array",
                "nullable": True,
                "items": {"type": "integer"},
                "minItems": 4,
                "maxItems": 4,
            },
        },
    }
    page = {
        "type": "object",
        "required": ["page", "mean_confidence"],
        "properties": {"page": {"type": "integer"}, "mean_confidence": {"type": "number"}},
    }
    result = {
        "type": "object",
        "nullable": True,
        "required": ["text", "mean_confidence", "pages", "fields"],
        "properties": {
            "text": {"type": "string"},
            "mean_confidence": {"type": "number"},
            "pages": {"type": "array", "items": page},
            "fields": {
                "type": "object",
                "additionalProperties": {"$ref": "#/components/schemas/Field"},
            },
        },
    }
    return {"Result": result, "Field": field}
