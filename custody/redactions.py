"""Where a document's redacted views live, and the ledger event that records each one.

Light on purpose: the redaction service (``activities.redact``) writes these
objects and events, and verification (``starter.evidence.verify.redactions``) reads
them back, so both agree on one layout:
``redactions/<tenant>/<sha256>/<policy hash[:16]>.{json,pdf,txt}``.

A view that is kept is recorded in the tenant's ledger as a
``redaction_created`` event: the document's SHA-256, the approver (``actor``),
and in ``detail`` the view's key, its PDF's and text's SHA-256, the policy's
name and hash, the evidence record's hash and the count of boxes painted
(``box_count``).
Hashes, ids and counts only, never what was removed.

A view is made where OCR engines may run, on the I/O workers: ``custody
redact`` starts a ``RedactWorkflow`` whose one activity makes (or finds) the
view and answers with its key (:class:`RedactInput`, :class:`RedactResult`).
"""

from __future__ import annotations

from pydantic import BaseModel

from custody import ids

REDACTION_EVENT = "redaction_created"
REDACT_WORKFLOW_NAME = "RedactWorkflow"


class RedactInput(BaseModel):
    """A view asked of the I/O workers: the document, the policy and who approves it."""

    sha256: str
    tenant: str | None
    #: The redaction policy's JSON (``activities.redact.policy``): field and detector
    #: names, never document text; its hash is the one the view records.
    policy: str
    approved_by: str


class RedactResult(BaseModel):
    """Where the signed view is, and the SHA-256 of its stored bytes."""

    view_key: str
    view_sha256: str


def redact_workflow_id(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    """One workflow per view: concurrent asks for the same view converge on it."""
    return f"redact-{ids.workflow_id(sha256, tenant)}-{policy_sha256[:16]}"


def view_prefix(sha256: str, tenant: str | None) -> str:
    """The folder of one document's views (each policy's view and its event markers)."""
    return f"redactions/{ids.scope(tenant)}/{sha256}/"


def _view_stem(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    return f"{view_prefix(sha256, tenant)}{policy_sha256[:16]}"


def view_key(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    return f"{_view_stem(sha256, tenant, policy_sha256)}.json"


def view_pdf_key(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    return f"{_view_stem(sha256, tenant, policy_sha256)}.pdf"


def view_text_key(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    return f"{_view_stem(sha256, tenant, policy_sha256)}.txt"


def event_once(sha256: str, tenant: str | None, policy_sha256: str) -> str:
    """Where the markers live that let a retried attempt find the event it appended."""
    return f"{_view_stem(sha256, tenant, policy_sha256)}.event"
