"""Custody's codes and its exception tree: every exception the packages raise.

Every reason a document is refused or set aside is a stable upper-snake code.
The same code appears in the workflow result, the search attribute
``CustodyReason``, the audit trail, metrics and the CLI's exit status, so an
operator can grep for it years later. The HTTP edge and the CLI answer with
codes from the same enum (:data:`REQUEST_CODES`). Messages never carry
document content.

    CustodyError                  raised on purpose; carries a Code
    ├── DocumentRejected          permanent: the bytes break a rule; never retried
    │   │ (EMPTY, UNSUPPORTED_TYPE, TOO_LARGE, PAGE_LIMIT, PIXEL_LIMIT,
    │   │  ENCRYPTED, ACTIVE_CONTENT, DYNAMIC_XFA, CORRUPT, DECODE_LIMIT,
    │   │  TENANT_INVALID, TENANT_SHREDDED)
    │   └── TenantShredded        the tenant's key is destroyed (also a StoreError)
    ├── Quarantined               kept for review with its source; never retried
    │   │ (HASH_MISMATCH, LOW_CONFIDENCE, NO_TEXT, PAGE_COUNT_MISMATCH,
    │   │  SOURCE_MISSING, REF_INVALID, SEAL_INVALID, QUEUE_STALLED,
    │   │  RETRY_BUDGET_EXHAUSTED, FIELDS_MISSING, FIELD_INVALID, LANGUAGE_MISMATCH,
    │   │  TYPE_NOT_CONFIGURED)
    │   ├── RefInvalid            a signed object reference failed its check
    │   └── SealInvalid           a stored object was altered or moved (also a StoreError)
    ├── TransientFault            retried with backoff, then quarantined with the
    │     (STORE_UNAVAILABLE,     code and the attempt count kept
    │      OCR_ERROR, OCR_TIMEOUT, IO_TIMEOUT, STAGING_FULL,
    │      WORKER_LOST, INTERNAL, CIRCUIT_OPEN)
    │   └── CircuitOpen           a breaker refused the call (also a StoreUnavailable)
    ├── ConfigurationError        the deployment is wrong (missing key, bad path): CONFIGURATION;
    │                             production verification with no pinned key: TRUST_ANCHOR_MISSING;
    │                             an optional part not installed (custody.extras): EXTRA_MISSING
    │                             a sandbox layer missing in production: SANDBOX_DEGRADED
    │                             production with no witness: WITNESS_REQUIRED
    ├── KeyUntrusted              a signing key not pinned, expired or for development
    │     (KEY_UNTRUSTED, KEY_OUTSIDE_VALIDITY, KEY_DEVELOPMENT)
    ├── CanonicalError            NaN or Infinity in canonical JSON: CANONICAL_INVALID
    │                             (also a ValueError)
    ├── IdentityRefused           who decides is not known, valid or allowed (custody.operators)
    │     (OPERATOR_REQUIRED, OPERATOR_UNKNOWN, OPERATOR_REVOKED, OPERATOR_EXPIRED,
    │      ROLE_REQUIRED, DECISION_INVALID, SAME_APPROVER, APPROVAL_NOT_PENDING)
    ├── ReviewRefused             a review decision refused (NOT_IN_REVIEW, ALREADY_DECIDED, ...)
    ├── StateInvalid              a state version forged, unsigned, out of chain or
    │                             rolled back (custody.state.versions): STATE_INVALID
    ├── LedgerInvalid             the ledger's objects contradict each other: LEDGER_INVALID
    ├── UsageError                a command line the CLI cannot run: USAGE
    │   └── AmbiguousPrefix       a SHA-256 prefix naming several documents: AMBIGUOUS_PREFIX
    ├── EgressRefused             a release refused before any byte left
    │     (NOT_PUBLISHED, DOCUMENT_UNKNOWN, RECIPIENT_UNKNOWN, RECIPIENT_REVOKED,
    │      POLICY_UNKNOWN, POLICY_INVALID, SOURCE_ALTERED, RELEASE_INVALID, CHANNEL_INVALID,
    │      CONSENT_REQUIRED, RECIPIENT_BUCKET_RESERVED, RECIPIENT_ADDRESS_REFUSED,
    │      RECIPIENT_CREDENTIALS_MISSING)
    ├── DeliveryFailed            the recipient's channel failed; its code alone says
    │     (RECIPIENT_UNREACHABLE   whether a retry may help (``retryable``)
    │      retried; RECIPIENT_REFUSED, DELIVERY_CONFLICT, CHANNEL_INVALID,
    │      PACKET_INVALID final)
    ├── RenderFailed              a release's file could not be rendered: RENDER_FAILED
    ├── RedactionLeak             a redacted view still holds a redacted string: REDACTION_LEAK
    │   └── IdentifierFound       a detector still finds an identifier in the view: IDENTIFIER_FOUND
    ├── ProvenanceError           a release file's C2PA manifest or mark: PROVENANCE_INVALID
    │   ├── SigningKeyMissing     no C2PA chain where one must exist: SIGNING_KEY_MISSING
    │   ├── SigningKeyInvalid     the chain is unreadable, mismatched or exposed
    │   ├── SigningFailed         c2pa refused to sign: SIGNING_FAILED
    │   ├── ProvenanceInvalid     a manifest is there but cannot be read
    │   ├── UnsupportedMedia      not PDF, PNG, JPEG or TIFF: UNSUPPORTED_TYPE
    │   └── MarkInvalid           a mark tag beyond 64 bits, a page too small
    ├── AdmissionRejected         intake is full or paused: ADMISSION_<AdmissionReason>
    └── ReleaseStepFailed         in the release workflow: an activity failed for good
    StoreError                    the object store; messages carry keys, never content
    ├── ObjectMissing             no object at that key (also a KeyError)
    ├── ObjectExists              a conditional create found the key taken
    └── StoreUnavailable          the backend failed transiently; retry later
    UploadError                   the edge refuses a request: an HTTP status and a Code
    AuthError                     a missing, malformed, unknown or revoked API key
    StepFailed                    in the document workflow: an activity failed for good
    StepCancelled                 in the document workflow: a step ended by its cancellation
    HelperError (RuntimeError)    an OCR helper process (Tesseract, PP-OCR) failed a page or died
    TenantExists (ValueError)     a tenant of that name already exists
    NotFound (LookupError)        no such document (or tenant) for this caller

Inside activities these become ``temporalio.exceptions.ApplicationError`` with
``type`` set to the code (see ``activities.faults``); this module stays free
of Temporal and third-party imports so any layer, the workflow sandbox
included, can use it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: models import pydantic, this module imports nothing
    from custody.models import DocState


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
    #: Application rules (custody.state.rules): a field the tenant's policy requires was
    #: not read surely, or one read breaks its format; the policy chose quarantine.
    FIELDS_MISSING = "FIELDS_MISSING"
    FIELD_INVALID = "FIELD_INVALID"
    #: A page's text is in none of the languages the tenant's policy expects.
    LANGUAGE_MISMATCH = "LANGUAGE_MISMATCH"
    # Transient: retried with backoff; quarantine when attempts run out.
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    STAGING_FULL = "STAGING_FULL"
    OCR_ERROR = "OCR_ERROR"
    OCR_TIMEOUT = "OCR_TIMEOUT"
    WORKER_LOST = "WORKER_LOST"
    IO_TIMEOUT = "IO_TIMEOUT"
    INTERNAL = "INTERNAL"
    #: A step waited in its task queue past its schedule-to-start bound: no worker
    #: took it (workflows.retries). Quarantined with its source, for release later.
    QUEUE_STALLED = "QUEUE_STALLED"
    #: This worker's retry budget was spent: the retry failed fast instead of
    #: adding load to a failing dependency (workers.budget). Quarantined.
    RETRY_BUDGET_EXHAUSTED = "RETRY_BUDGET_EXHAUSTED"
    #: The circuit breaker around the store or the OCR engine is open (workers.breaker):
    #: the attempt failed at once without calling it; retried with backoff.
    CIRCUIT_OPEN = "CIRCUIT_OPEN"
    # Egress refusals: nothing leaves, and no egress event is written.
    NOT_PUBLISHED = "NOT_PUBLISHED"
    DOCUMENT_UNKNOWN = "DOCUMENT_UNKNOWN"
    RECIPIENT_UNKNOWN = "RECIPIENT_UNKNOWN"
    RECIPIENT_REVOKED = "RECIPIENT_REVOKED"
    POLICY_UNKNOWN = "POLICY_UNKNOWN"
    POLICY_INVALID = "POLICY_INVALID"
    SOURCE_ALTERED = "SOURCE_ALTERED"
    RELEASE_INVALID = "RELEASE_INVALID"
    #: The release policy requires consent and a referral's consent is false or unknown.
    CONSENT_REQUIRED = "CONSENT_REQUIRED"
    # Egress delivery: the recipient's side.
    #: Transport error, 5xx, 429, a deadline passed: a later attempt may get through.
    RECIPIENT_UNREACHABLE = "RECIPIENT_UNREACHABLE"
    #: A 4xx, access denied, or a TLS certificate that does not verify.
    RECIPIENT_REFUSED = "RECIPIENT_REFUSED"
    #: The recipient already holds other bytes under this release id.
    DELIVERY_CONFLICT = "DELIVERY_CONFLICT"
    #: The recipient's registered channel spec is malformed.
    CHANNEL_INVALID = "CHANNEL_INVALID"
    #: A bad release id or file name in a packet: a caller's bug.
    PACKET_INVALID = "PACKET_INVALID"
    # Egress files: rendering, the embedded mark, the C2PA manifest.
    RENDER_FAILED = "RENDER_FAILED"
    #: A redacted view's check found a redacted string in its text, pixels or bytes:
    #: the view is not published (activities.redact.check).
    REDACTION_LEAK = "REDACTION_LEAK"
    #: A C2PA manifest is there but cannot be read.
    PROVENANCE_INVALID = "PROVENANCE_INVALID"
    #: No C2PA chain where one must already exist (production never makes one).
    SIGNING_KEY_MISSING = "SIGNING_KEY_MISSING"
    #: The C2PA chain is unreadable, mismatched, or readable by others.
    SIGNING_KEY_INVALID = "SIGNING_KEY_INVALID"
    #: c2pa refused to sign (a bad file, a chain it does not trust).
    SIGNING_FAILED = "SIGNING_FAILED"
    #: A mark tag beyond 64 bits, or a page too small to carry the mark.
    MARK_INVALID = "MARK_INVALID"
    #: A setting, key or file the deployment needs is missing or wrong.
    CONFIGURATION = "CONFIGURATION"
    # Answers to a request, from the HTTP edge and the CLI: never a document's outcome.
    UNAUTHENTICATED = "UNAUTHENTICATED"
    KEY_REVOKED = "KEY_REVOKED"
    UNAUTHORIZED = "UNAUTHORIZED"
    BAD_REQUEST = "BAD_REQUEST"
    BAD_HEADER = "BAD_HEADER"
    BAD_SOURCE_ID = "BAD_SOURCE_ID"
    BAD_SHA256 = "BAD_SHA256"
    BAD_IDEMPOTENCY_KEY = "BAD_IDEMPOTENCY_KEY"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    LENGTH_MISMATCH = "LENGTH_MISMATCH"
    NOT_FOUND = "NOT_FOUND"
    ADMISSION_PAUSED = "ADMISSION_PAUSED"
    ADMISSION_SOURCE_RATE = "ADMISSION_SOURCE_RATE"
    ADMISSION_TENANT_RATE = "ADMISSION_TENANT_RATE"
    ADMISSION_WAITING_DOCUMENTS = "ADMISSION_WAITING_DOCUMENTS"
    ADMISSION_WAITING_BYTES = "ADMISSION_WAITING_BYTES"
    #: A tenant's uploads in flight at the edge: too many at once, or too many bytes.
    INFLIGHT_UPLOADS = "INFLIGHT_UPLOADS"
    INFLIGHT_BYTES = "INFLIGHT_BYTES"
    #: The body arrived slower than the edge's minimum rate (408).
    BODY_TOO_SLOW = "BODY_TOO_SLOW"
    #: The tenant's share of the manual lane is full.
    MANUAL_LANE_FULL = "MANUAL_LANE_FULL"
    #: The edge's preview lane (``POST /v1/preview``) is full (429), or a
    #: preview ran past its deadline (504); a preview is never a document's outcome.
    PREVIEW_BUSY = "PREVIEW_BUSY"
    PREVIEW_TIMEOUT = "PREVIEW_TIMEOUT"
    TENANT_EXISTS = "TENANT_EXISTS"
    USAGE = "USAGE"
    UNREACHABLE = "UNREACHABLE"
    NOTHING_TO_ROLL_BACK = "NOTHING_TO_ROLL_BACK"
    UNKNOWN_CONFIG = "UNKNOWN_CONFIG"
    #: The ledger's code for a verification that FAILed (``custody verify``).
    VERIFY_FAILED = "VERIFY_FAILED"
    #: Signing keys (``starter.evidence.trust``): not pinned outside the store, outside its
    #: validity period, a development key in production, a readable key folder.
    KEY_UNTRUSTED = "KEY_UNTRUSTED"
    KEY_OUTSIDE_VALIDITY = "KEY_OUTSIDE_VALIDITY"
    KEY_DEVELOPMENT = "KEY_DEVELOPMENT"
    KEY_PERMISSIONS = "KEY_PERMISSIONS"
    #: Verification in production with no key pinned (CUSTODY_TRUST_FPRS, --trust):
    #: refused before anything is checked, never a fallback to the workers' keyring.
    TRUST_ANCHOR_MISSING = "TRUST_ANCHOR_MISSING"
    #: A value RFC 8785 canonical JSON cannot express (NaN, Infinity).
    CANONICAL_INVALID = "CANONICAL_INVALID"
    #: Security-relevant state (``custody.state.versions``): a version unsigned, signed
    #: by an untrusted key, out of its chain, missing, or older than one seen.
    STATE_INVALID = "STATE_INVALID"
    #: A SHA-256 prefix on the command line that names more than one of the tenant's documents.
    AMBIGUOUS_PREFIX = "AMBIGUOUS_PREFIX"
    #: A document type named at submission (``--type``, Custody-Document-Type) that is
    #: neither built in nor configured in the tenant's fields policy: refused (a request).
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    #: The type a document was submitted as is no longer configured when its fields
    #: are read (the policy changed meanwhile): quarantined for a person to decide.
    TYPE_NOT_CONFIGURED = "TYPE_NOT_CONFIGURED"
    #: An optional part (a pip extra: easyocr, bench, chaos) that a command or the
    #: configured engine needs is not installed; the message says how (custody.extras).
    EXTRA_MISSING = "EXTRA_MISSING"
    #: Named identities (custody.operators): a decision with no acting identity
    #: (``CUSTODY_OPERATOR_CREDENTIAL`` unset), an unknown, revoked or expired one,
    #: one without the role the decision needs, or a decision whose signature fails.
    OPERATOR_REQUIRED = "OPERATOR_REQUIRED"
    OPERATOR_UNKNOWN = "OPERATOR_UNKNOWN"
    OPERATOR_REVOKED = "OPERATOR_REVOKED"
    OPERATOR_EXPIRED = "OPERATOR_EXPIRED"
    ROLE_REQUIRED = "ROLE_REQUIRED"
    DECISION_INVALID = "DECISION_INVALID"
    #: ``custody operators bootstrap`` where an identity already exists.
    OPERATOR_EXISTS = "OPERATOR_EXISTS"
    #: An API key used outside its scopes (starter.edge.tenants): 403.
    SCOPE_DENIED = "SCOPE_DENIED"
    #: A review decision on a document that is not waiting in review, or one
    #: already decided (a second reviewer lost the race).
    NOT_IN_REVIEW = "NOT_IN_REVIEW"
    ALREADY_DECIDED = "ALREADY_DECIDED"
    #: The same identity approving twice where the policy asks for two people.
    SAME_APPROVER = "SAME_APPROVER"
    #: Why a reviewer rejected a document (``custody review resolve --reject``):
    #: the rejected document's code, from this fixed list (free text goes in --note).
    ILLEGIBLE = "ILLEGIBLE"
    WRONG_DOCUMENT = "WRONG_DOCUMENT"
    DUPLICATE = "DUPLICATE"
    OTHER = "OTHER"
    #: Nobody decided a document in review before its review expired: quarantined
    #: with its source, for ``custody quarantine release`` to bring back.
    REVIEW_EXPIRED = "REVIEW_EXPIRED"
    #: A document workflow cancelled (``custody`` or the Temporal UI): its own
    #: outcome, ``cancelled``, with the reason kept.
    CANCELLED = "CANCELLED"
    #: A release held for a second approver (two-person rule) that nobody approved in time.
    APPROVAL_EXPIRED = "APPROVAL_EXPIRED"
    #: An approval for a release that is not waiting for one (not held, or ended).
    APPROVAL_NOT_PENDING = "APPROVAL_NOT_PENDING"
    #: A recipient's channel names Custody's own storage: its bucket and prefix, the
    #: witness bucket, or one of its folders (activities.egress.reach).
    RECIPIENT_BUCKET_RESERVED = "RECIPIENT_BUCKET_RESERVED"
    #: A recipient's channel may not be reached from here: a private, link-local,
    #: CGNAT, ULA, multicast or unspecified address (or one embedding such), loopback or
    #: plain http:// or the outbox in production, a domain off the operator's allowlist.
    RECIPIENT_ADDRESS_REFUSED = "RECIPIENT_ADDRESS_REFUSED"
    #: An S3 recipient without credentials of its own (activities.egress.s3_access).
    RECIPIENT_CREDENTIALS_MISSING = "RECIPIENT_CREDENTIALS_MISSING"
    #: A tenant's releases running at once reached the edge's bound (429).
    INFLIGHT_RELEASES = "INFLIGHT_RELEASES"
    #: In production, a sandbox layer the platform refused (activities.inspect.lockdown):
    #: the child decodes nothing and the worker does not start. An operator's fix.
    SANDBOX_DEGRADED = "SANDBOX_DEGRADED"
    #: The audit ledger's own objects contradict each other (a hole in a log written
    #: before tiles, a batch out of its place): appends stop until an operator looks.
    LEDGER_INVALID = "LEDGER_INVALID"
    #: Production with no independent witness to cosign checkpoints (CUSTODY_WITNESS_URL,
    #: CUSTODY_WITNESS_KEYS, CUSTODY_WITNESS_QUORUM): refused before anything runs.
    WITNESS_REQUIRED = "WITNESS_REQUIRED"
    #: A redacted view's re-OCR or text layer still shows an identifier a detector finds
    #: (activities.redact.scan): the view is refused, its finds named by kind and box.
    IDENTIFIER_FOUND = "IDENTIFIER_FOUND"


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
        # A reviewer's rejection: the document ends rejected with the reason code.
        Code.ILLEGIBLE,
        Code.WRONG_DOCUMENT,
        Code.DUPLICATE,
        Code.OTHER,
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
        Code.CANONICAL_INVALID,
        Code.QUEUE_STALLED,
        Code.RETRY_BUDGET_EXHAUSTED,
        Code.FIELDS_MISSING,
        Code.FIELD_INVALID,
        Code.LANGUAGE_MISMATCH,
        Code.TYPE_NOT_CONFIGURED,
        Code.REVIEW_EXPIRED,
    }
)

#: The reasons a reviewer may give for a rejection (``--reject CODE``): a fixed list.
REVIEW_REJECT_CODES: tuple[Code, ...] = (
    Code.ILLEGIBLE,
    Code.WRONG_DOCUMENT,
    Code.DUPLICATE,
    Code.OTHER,
)

#: A cancelled document (``cancelled``): neither refused nor set aside, stopped.
CANCEL_CODES: frozenset[Code] = frozenset({Code.CANCELLED})

#: A release refused before anything left: final for that request.
EGRESS_REFUSE_CODES: frozenset[Code] = frozenset(
    {
        Code.NOT_PUBLISHED,
        Code.DOCUMENT_UNKNOWN,
        Code.RECIPIENT_UNKNOWN,
        Code.RECIPIENT_REVOKED,
        Code.POLICY_UNKNOWN,
        Code.POLICY_INVALID,
        Code.SOURCE_ALTERED,
        Code.RELEASE_INVALID,
        Code.CHANNEL_INVALID,
        Code.CONSENT_REQUIRED,
        Code.APPROVAL_EXPIRED,
        Code.RECIPIENT_BUCKET_RESERVED,
        Code.RECIPIENT_ADDRESS_REFUSED,
        Code.RECIPIENT_CREDENTIALS_MISSING,
    }
)

#: A release that cannot succeed on a retry: the recipient said no or holds other
#: bytes, or the files cannot be packed, rendered, marked or signed as asked. A
#: missing or bad signing chain waits for an operator, not for a backoff.
DELIVERY_FINAL_CODES: frozenset[Code] = frozenset(
    {
        Code.RECIPIENT_REFUSED,
        Code.DELIVERY_CONFLICT,
        Code.PACKET_INVALID,
        Code.RENDER_FAILED,
        Code.REDACTION_LEAK,
        Code.IDENTIFIER_FOUND,
        Code.PROVENANCE_INVALID,
        Code.SIGNING_KEY_MISSING,
        Code.SIGNING_KEY_INVALID,
        Code.SIGNING_FAILED,
        Code.MARK_INVALID,
    }
)

#: What the edge and the CLI answer about a request; no document ends with one.
REQUEST_CODES: frozenset[Code] = frozenset(
    {
        Code.UNAUTHENTICATED,
        Code.KEY_REVOKED,
        Code.UNAUTHORIZED,
        Code.BAD_REQUEST,
        Code.BAD_HEADER,
        Code.BAD_SOURCE_ID,
        Code.BAD_SHA256,
        Code.BAD_IDEMPOTENCY_KEY,
        Code.IDEMPOTENCY_KEY_REUSED,
        Code.LENGTH_MISMATCH,
        Code.NOT_FOUND,
        Code.ADMISSION_PAUSED,
        Code.ADMISSION_SOURCE_RATE,
        Code.ADMISSION_TENANT_RATE,
        Code.ADMISSION_WAITING_DOCUMENTS,
        Code.ADMISSION_WAITING_BYTES,
        Code.INFLIGHT_UPLOADS,
        Code.INFLIGHT_BYTES,
        Code.BODY_TOO_SLOW,
        Code.MANUAL_LANE_FULL,
        Code.PREVIEW_BUSY,
        Code.PREVIEW_TIMEOUT,
        Code.TENANT_EXISTS,
        Code.USAGE,
        Code.UNREACHABLE,
        Code.NOTHING_TO_ROLL_BACK,
        Code.UNKNOWN_CONFIG,
        Code.VERIFY_FAILED,
        Code.KEY_UNTRUSTED,
        Code.KEY_OUTSIDE_VALIDITY,
        Code.TRUST_ANCHOR_MISSING,
        Code.STATE_INVALID,
        Code.AMBIGUOUS_PREFIX,
        Code.UNKNOWN_TYPE,
        Code.OPERATOR_REQUIRED,
        Code.OPERATOR_UNKNOWN,
        Code.OPERATOR_REVOKED,
        Code.OPERATOR_EXPIRED,
        Code.ROLE_REQUIRED,
        Code.DECISION_INVALID,
        Code.OPERATOR_EXISTS,
        Code.SCOPE_DENIED,
        Code.NOT_IN_REVIEW,
        Code.ALREADY_DECIDED,
        Code.SAME_APPROVER,
        Code.APPROVAL_NOT_PENDING,
        Code.INFLIGHT_RELEASES,
        Code.WITNESS_REQUIRED,
    }
)

#: Retried with backoff; a document is quarantined, a release fails, when attempts
#: run out. Listed, not computed: a new code must be placed in one of these sets
#: on purpose (tests/custody/test_errors.py checks), never retried by omission.
TRANSIENT_CODES: frozenset[Code] = frozenset(
    {
        Code.STORE_UNAVAILABLE,
        Code.STAGING_FULL,
        Code.OCR_ERROR,
        Code.OCR_TIMEOUT,
        Code.WORKER_LOST,
        Code.IO_TIMEOUT,
        Code.INTERNAL,
        Code.RECIPIENT_UNREACHABLE,
        Code.CIRCUIT_OPEN,
        # Raised inside activities too (a signing key, a payload key): an operator's
        # fix is picked up by a later attempt instead of failing the work for good.
        Code.CONFIGURATION,
        Code.KEY_DEVELOPMENT,
        Code.KEY_PERMISSIONS,
        # Like CONFIGURATION: once an operator installs the extra, a retry succeeds.
        Code.EXTRA_MISSING,
        Code.SANDBOX_DEGRADED,
        # A ledger whose objects contradict each other waits for an operator, as above.
        Code.LEDGER_INVALID,
    }
)


#: Codes that must never be retried: the activity marks them non-retryable.
NON_RETRYABLE_CODES: frozenset[str] = frozenset(
    c.value
    for c in REJECT_CODES
    | QUARANTINE_CODES
    | EGRESS_REFUSE_CODES
    | DELIVERY_FINAL_CODES
    | CANCEL_CODES
)


class AdmissionReason(StrEnum):
    """Why admission refused work. The lower-case values are a contract: they are the
    ``reason`` label of the admission metrics; the edge answers ``ADMISSION_<REASON>``."""

    PAUSED = "paused"
    SOURCE_RATE = "source_rate"
    TENANT_RATE = "tenant_rate"
    WAITING_DOCUMENTS = "waiting_documents"
    WAITING_BYTES = "waiting_bytes"

    @property
    def code(self) -> Code:
        return Code(f"ADMISSION_{self.value.upper()}")


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

    code = Code.CONFIGURATION


class KeyUntrusted(CustodyError):
    """A signing key is not pinned outside the store, outside its validity, or a
    development key where production is required (``starter.evidence.trust``)."""

    code = Code.KEY_UNTRUSTED


class IdentityRefused(CustodyError):
    """A decision refused for who makes it: no identity, an unknown, revoked or expired
    one, one without the role, or a signature that fails (custody.operators)."""

    code = Code.OPERATOR_REQUIRED


class ReviewRefused(CustodyError):
    """A review decision that cannot take effect: the document is not in review
    (NOT_IN_REVIEW), another decision won (ALREADY_DECIDED), or the decision's
    identity or corrections were refused (their code); the document is unchanged."""

    code = Code.NOT_IN_REVIEW


class StateInvalid(CustodyError):
    """A state version is forged, unsigned, out of its chain or rolled back; never used."""

    code = Code.STATE_INVALID


class LedgerInvalid(CustodyError):
    """The audit ledger's objects contradict each other; nothing is appended after them."""

    code = Code.LEDGER_INVALID


class CanonicalError(CustodyError, ValueError):
    """A value RFC 8785 canonical JSON cannot express (NaN, Infinity): CANONICAL_INVALID."""

    code = Code.CANONICAL_INVALID


class UsageError(CustodyError):
    """A command line the CLI cannot run (contradictory or missing arguments)."""

    code = Code.USAGE


class EgressRefused(CustodyError):
    """A read or release refused before any byte left; no egress event is written."""

    code = Code.RELEASE_INVALID


class RedactionLeak(CustodyError):
    """A redacted view failed its check; it is neither stored nor released."""

    code = Code.REDACTION_LEAK
    #: The refused view's PDF, held in this process only (the benchmark searches it for
    #: its ground truth); never stored, logged or sent.
    view: bytes = b""


class IdentifierFound(RedactionLeak):
    """A detector re-run on the finished view found an identifier; the view is refused.

    The detail is ``found: `` and a JSON list of ``{kind, page, box}``: kinds, page
    numbers and pixel boxes only, never the text that was found.
    """

    code = Code.IDENTIFIER_FOUND


class DeliveryFailed(CustodyError):
    """A delivery did not complete; :attr:`retryable` says whether a later run may succeed.

    Retrying is always safe: every channel is idempotent per release id, so a
    retried delivery never leaves a second copy at the recipient.
    """

    code = Code.RECIPIENT_UNREACHABLE

    def __init__(self, code: Code | str, detail: str = "") -> None:
        super().__init__(code, detail)

    @property
    def retryable(self) -> bool:
        # The code sets decide, so a channel's own retry loop and the activity's
        # retry policy (``activities.faults``) can never disagree.
        return self.code.value not in NON_RETRYABLE_CODES


class RenderFailed(CustodyError):
    """A release's file could not be rendered; the detail names a page, never its text."""

    code = Code.RENDER_FAILED

    def __init__(self, detail: str = "") -> None:
        super().__init__(None, detail)


class ProvenanceError(CustodyError):
    """A release file's C2PA manifest or mark could not be made or read.

    Each subclass has its own code; ``detail`` names files and c2pa's validation
    codes, never content.
    """

    code = Code.PROVENANCE_INVALID

    def __init__(self, detail: str = "") -> None:
        super().__init__(None, detail)


class SigningKeyMissing(ProvenanceError):
    """No C2PA chain where one must already exist; production never creates one."""

    code = Code.SIGNING_KEY_MISSING


class SigningKeyInvalid(ProvenanceError):
    """The C2PA chain is unreadable, its parts do not belong together, or the key is exposed."""

    code = Code.SIGNING_KEY_INVALID


class SigningFailed(ProvenanceError):
    """c2pa refused to sign (a bad file, a chain it does not trust)."""

    code = Code.SIGNING_FAILED


class ProvenanceInvalid(ProvenanceError):
    """A C2PA manifest is there but cannot be read, or its Custody claim does not parse."""

    code = Code.PROVENANCE_INVALID


class UnsupportedMedia(ProvenanceError):
    """Not PDF, PNG, JPEG or TIFF: nothing C2PA signing here can carry."""

    code = Code.UNSUPPORTED_TYPE


class MarkInvalid(ProvenanceError):
    """A mark tag beyond 64 bits, or a page too small to carry one tile."""

    code = Code.MARK_INVALID


class AdmissionRejected(CustodyError):
    """Intake refused new work for now; try again after ``retry_after`` seconds."""

    code = Code.ADMISSION_PAUSED

    def __init__(self, reason: AdmissionReason | str, retry_after: float) -> None:
        self.reason = AdmissionReason(reason)
        self.retry_after = retry_after
        detail = f"admission {self.reason.value}, retry after {retry_after:.0f}s"
        super().__init__(self.reason.code, detail)


class StoreError(Exception):
    """Base of store errors; messages carry keys, never object content."""


class ObjectMissing(StoreError, KeyError):
    """No object at that key."""


class ObjectExists(StoreError):
    """A conditional create found the key taken (raised by ``create_or_raise``)."""


class StoreUnavailable(StoreError):
    """The backend could not be reached or failed transiently; retry later."""


class CircuitOpen(TransientFault, StoreUnavailable):
    """A circuit breaker refused the call: its dependency failed too often just now.

    Also a :class:`StoreUnavailable`, so code that waits out a store outage waits
    this out too; the code tells the two apart.
    """

    code = Code.CIRCUIT_OPEN


class TenantShredded(DocumentRejected, StoreError):
    """The tenant's key-encryption key was destroyed: its objects are unreadable for good.

    A rejection (final, never retried): no attempt or review can bring the key back.
    """

    code = Code.TENANT_SHREDDED


class RefInvalid(Quarantined):
    """A reference failed its tenant, hash or signature check; never retried."""

    code = Code.REF_INVALID


class SealInvalid(Quarantined, StoreError):
    """A stored object is not sealed, was altered, or was moved from another key.

    Quarantined and never retried: the bytes will not change on a retry, and an
    altered object is for a person to look at.
    """

    code = Code.SEAL_INVALID


class UploadError(Exception):
    """A request the edge refuses: an HTTP status and a stable code."""

    def __init__(
        self, status: int, code: Code, message: str, retry_after: float | None = None
    ) -> None:
        self.status, self.code, self.message = status, code, message
        self.retry_after = retry_after  # seconds, for a Retry-After header
        super().__init__(f"{status} {code}")


class AuthError(Exception):
    """A missing, malformed or unknown key (``revoked`` False) or a revoked one."""

    def __init__(self, revoked: bool = False) -> None:
        self.revoked = revoked
        super().__init__("revoked" if revoked else "invalid")


class TenantExists(ValueError):
    """A tenant of that name already exists."""


class NotFound(LookupError):
    """No document with that SHA-256 for this tenant."""


class StepCancelled(Exception):
    """In the document workflow: a step ended because the workflow was cancelled."""


class StepFailed(Exception):
    """An activity failed for good; carries the outcome the workflow records."""

    def __init__(self, step: str, state: DocState, code: str, attempts: int) -> None:
        super().__init__(code)
        self.step, self.state, self.code, self.attempts = step, state, code, attempts


_CODE_VALUES = frozenset(c.value for c in Code)


class ReleaseStepFailed(CustodyError):
    """In the release workflow: an activity failed for good with this error type.

    Raised and caught inside the workflow only. A type that is no Custody code
    is kept as INTERNAL, as the document workflow does.
    """

    def __init__(self, error_type: str) -> None:
        super().__init__(error_type if error_type in _CODE_VALUES else Code.INTERNAL)


class HelperError(RuntimeError):
    """The helper could not start, died, or failed a page; the message has no page text."""


class AmbiguousPrefix(UsageError):
    """A SHA-256 prefix (``custody``'s, never the edge's) naming several of a tenant's documents.

    ``matches`` lists them in full, so a person can pick one; only the CLI
    resolves prefixes, so no HTTP caller can enumerate documents with one.
    """

    code = Code.AMBIGUOUS_PREFIX

    def __init__(self, prefix: str, matches: list[str]) -> None:
        super().__init__(detail=f"{prefix} names {len(matches)} documents: {', '.join(matches)}")
        self.matches = matches
