"""Custody's error codes and exception tree.

Every reason a document is refused or set aside is a stable upper-snake code.
The same code appears in the workflow result, the search attribute
``CustodyReason``, the audit trail, metrics and the CLI's exit status, so an
operator can grep for it years later. Messages never carry document content.

    CustodyError
    ├── DocumentRejected        permanent: the bytes break a rule; never retried
    │     (EMPTY, UNSUPPORTED_TYPE, TOO_LARGE, PAGE_LIMIT, PIXEL_LIMIT,
    │      ENCRYPTED, ACTIVE_CONTENT, DYNAMIC_XFA, CORRUPT, DECODE_LIMIT,
    │      TENANT_INVALID, TENANT_SHREDDED)
    ├── Quarantined             kept for review with its source; never retried
    │     (HASH_MISMATCH, LOW_CONFIDENCE, NO_TEXT, PAGE_COUNT_MISMATCH,
    │      SOURCE_MISSING, REF_INVALID, SEAL_INVALID)
    ├── TransientFault          retried with backoff, then quarantined with the
    │     (STORE_UNAVAILABLE,    code and the attempt count kept
    │      OCR_ERROR, OCR_TIMEOUT, IO_TIMEOUT, STAGING_FULL,
    │      WORKER_LOST, INTERNAL)
    └── ConfigurationError      the deployment is wrong (missing key, bad path)

Inside activities these become ``temporalio.exceptions.ApplicationError`` with
``type`` set to the code (see ``activities.faults``); this module stays free
of Temporal imports so any layer can use it.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    # Rejections: the input breaks a rule; retrying cannot help.
    EMPTY = "EMPTY"
    UNSUPPORTED_TYPE = "UNSUPPORTED_TYPE"
    TOO_LARGE = "TOO_LARGE"
    PAGE_LIMIT = "PAGE_LIMIT"
    PIXEL_LIMIT = "PIXEL_LIMIT"
    ENCRYPTED = "ENCRYPTED"
    ACTIVE_CONTENT = "ACTIVE_CONTENT"
    DYNAMIC_XFA = "DYNAMIC_XFA"
    CORRUPT = "CORRUPT"
    DECODE_LIMIT = "DECODE_LIMIT"
    TENANT_INVALID = "TENANT_INVALID"
    #: The tenant's key-encryption key was destroyed: its objects are gone for good.
    TENANT_SHREDDED = "TENANT_SHREDDED"
    # Quarantine: kept with the source for a person to look at.
    HASH_MISMATCH = "HASH_MISMATCH"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    NO_TEXT = "NO_TEXT"
    PAGE_COUNT_MISMATCH = "PAGE_COUNT_MISMATCH"
    SOURCE_MISSING = "SOURCE_MISSING"
    #: A signed object reference failed its signature, tenant or hash check
    #: (custody.refs): a forged start or tampered history, for a person to see.
    REF_INVALID = "REF_INVALID"
    #: A stored object is not sealed, was altered, or was moved between keys.
    SEAL_INVALID = "SEAL_INVALID"
    # Transient: retried with backoff; quarantine when attempts run out.
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    STAGING_FULL = "STAGING_FULL"
    OCR_ERROR = "OCR_ERROR"
    OCR_TIMEOUT = "OCR_TIMEOUT"
    WORKER_LOST = "WORKER_LOST"
    IO_TIMEOUT = "IO_TIMEOUT"
    INTERNAL = "INTERNAL"


REJECT_CODES: frozenset[Code] = frozenset(
    {
        Code.EMPTY,
        Code.UNSUPPORTED_TYPE,
        Code.TOO_LARGE,
        Code.PAGE_LIMIT,
        Code.PIXEL_LIMIT,
        Code.ENCRYPTED,
        Code.ACTIVE_CONTENT,
        Code.DYNAMIC_XFA,
        Code.CORRUPT,
        Code.DECODE_LIMIT,
        Code.TENANT_INVALID,
        Code.TENANT_SHREDDED,
    }
)

QUARANTINE_CODES: frozenset[Code] = frozenset(
    {
        Code.HASH_MISMATCH,
        Code.LOW_CONFIDENCE,
        Code.NO_TEXT,
        Code.PAGE_COUNT_MISMATCH,
        Code.SOURCE_MISSING,
        Code.REF_INVALID,
        Code.SEAL_INVALID,
    }
)

TRANSIENT_CODES: frozenset[Code] = frozenset(set(Code) - REJECT_CODES - QUARANTINE_CODES)

#: Codes that must never be retried: the activity marks them non-retryable.
NON_RETRYABLE_CODES: frozenset[str] = frozenset(c.value for c in REJECT_CODES | QUARANTINE_CODES)


class CustodyError(Exception):
    """Base of every error Custody raises on purpose."""

    code: Code = Code.INTERNAL

    def __init__(self, code: Code | str | None = None, detail: str = "") -> None:
        if code is not None:
            self.code = Code(code)
        # ``detail`` is for hashes, sizes, limits and type names only.
        self.detail = detail
        super().__init__(f"{self.code}: {detail}" if detail else str(self.code))


class DocumentRejected(CustodyError):
    """The bytes break an intake rule; final, never retried, no OCR spent."""

    code = Code.CORRUPT


class Quarantined(CustodyError):
    """Set aside for review with its source kept; never retried automatically."""

    code = Code.LOW_CONFIDENCE


class TransientFault(CustodyError):
    """A fault that a later attempt may not meet (storage, worker, timeouts)."""

    code = Code.STORE_UNAVAILABLE


class ConfigurationError(CustodyError):
    """The deployment is misconfigured; fail fast at start-up."""

    code = Code.INTERNAL


class AdmissionRejected(CustodyError):
    """Intake refused new work for now; try again after ``retry_after`` seconds."""

    code = Code.INTERNAL

    def __init__(self, reason: str, retry_after: float) -> None:
        self.reason = reason
        self.retry_after = retry_after
        super().__init__(None, f"admission {reason}, retry after {retry_after:.0f}s")


def exit_code_for(state: str) -> int:
    """The CLI exit status for a terminal state: scripts branch on it."""
    return {"published": 0, "rejected": 3, "quarantined": 4}.get(state, 5)
