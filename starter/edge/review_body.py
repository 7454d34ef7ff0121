"""A review decision as the edge receives it: the body's shape, its bounds, its status codes.

    {"verdict": "approve" | "reject", "reject_code": ILLEGIBLE | ... | null,
     "fields": {NAME: VALUE}, "lines": [{"page", "line", "text"}], "note": TEXT | null}

The shape is checked exactly as the OpenAPI document states it (400
``BAD_REQUEST`` for anything else: ``review_spec`` is built from the bounds
here), so a request the document calls valid is never refused for its shape;
what only the document's state can say (a reject without its code, a field
the document does not have) is the decision's own refusal, 422.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

from custody.errors import Code, UploadError
from custody.reviews import reject_codes

MAX_BODY_BYTES = 256 * 1024
MAX_FIELDS = 64
MAX_LINES = 512
MAX_TEXT = 2000
_KEYS = {"verdict", "reject_code", "fields", "lines", "note"}
_LINE_KEYS = {"page", "line", "text"}

#: A refused decision's HTTP status by its code (any other: 422, as ``USAGE`` from the
#: workflow's validator for a line past the document's pages).
STATUS: dict[str, int] = {
    Code.NOT_IN_REVIEW: 404,
    Code.ALREADY_DECIDED: 409,
    Code.DECISION_INVALID: 422,
    Code.OPERATOR_REQUIRED: 401,
    Code.OPERATOR_UNKNOWN: 403,
    Code.OPERATOR_REVOKED: 403,
    Code.OPERATOR_EXPIRED: 403,
    Code.ROLE_REQUIRED: 403,
    Code.IO_TIMEOUT: 503,
    Code.INTERNAL: 500,
}


@dataclass
class Verdict:
    """What the reviewer decided, checked for shape only."""

    approve: bool
    reject_code: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    lines: list[tuple[int, int, str]] = field(default_factory=list)
    note: str | None = None

    def semantic_refusal(self) -> str | None:
        """Why this verdict cannot be a decision (a 422), or None."""
        if not self.approve and self.reject_code is None:
            return "a rejection needs its reject_code"
        if self.approve and self.reject_code is not None:
            return "an approval takes no reject_code"
        if not self.approve and (self.fields or self.lines):
            return "a rejection takes no corrections"
        return None


def verdict(body: Any) -> Verdict:
    """The body as a :class:`Verdict`, or 400 BAD_REQUEST naming what is wrong."""
    if not isinstance(body, dict) or not set(body) <= _KEYS or "verdict" not in body:
        _bad("the body is an object with verdict (and reject_code, fields, lines, note)")
    if body["verdict"] not in ("approve", "reject"):
        _bad("verdict is 'approve' or 'reject'")
    code = body.get("reject_code")
    if code is not None and code not in reject_codes():
        _bad(f"reject_code is one of {', '.join(reject_codes())}")
    note = body.get("note")
    if note is not None and not _text(note):
        _bad(f"note is a string of at most {MAX_TEXT} characters")
    return Verdict(
        body["verdict"] == "approve", code, _fields(body.get("fields", {})),
        _lines(body.get("lines", [])), note,
    )  # fmt: skip


def _fields(given: Any) -> dict[str, str]:
    if not isinstance(given, dict) or len(given) > MAX_FIELDS:
        _bad(f"fields is an object of at most {MAX_FIELDS} names")
    if not all(_text(v) for v in given.values()):
        _bad(f"each field's value is a string of at most {MAX_TEXT} characters")
    return dict(given)


def _lines(given: Any) -> list[tuple[int, int, str]]:
    if not isinstance(given, list) or len(given) > MAX_LINES:
        _bad(f"lines is a list of at most {MAX_LINES} corrections")
    found = []
    for item in given:
        if not isinstance(item, dict) or set(item) != _LINE_KEYS:
            _bad("each line is {page, line, text}")
        page, line, text = item["page"], item["line"], item["text"]
        if not (_count(page) and _count(line) and _text(text)):
            _bad("page and line are integers from 1; text a string")
        found.append((page, line, text))
    return found


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT


def _bad(message: str) -> NoReturn:
    raise UploadError(400, Code.BAD_REQUEST, message)
