"""Egress: which bytes left, to whom, under what policy.

Every way document content leaves Custody (an HTTP read of text or pages,
``custody result``, an evidence bundle, a release to an outside recipient) is
an **egress event** in the tenant's ledger, written *before* the bytes are
handed out; if the event cannot be written, nothing leaves. The event holds
the kind, the actor (an API key id, an operator or OS user name: never a
secret), the recipient of a release, the policy's name and the SHA-256 of its
canonical form, the documents the bytes derive from and the SHA-256 of exactly
the bytes handed out.

A **release** is one packet of files for one registered recipient under one
pinned policy. Its id derives from (tenant, recipient, policy hash, sorted
document hashes), so a repeated or concurrent request converges on one release
and the recipient receives the packet once.

This module is the light shared core of egress (models, ids, store keys): the
release workflow imports it through the sandbox, so it imports nothing heavy.
Each release step's input and result: ``custody.release_steps``.
"""

from __future__ import annotations

import hashlib
import re
import string
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from custody import ids
from custody.canonical import canonical_json
from custody.models import ResultRecord, fields_from
from custody.queues import SA_RECIPIENT as SA_RECIPIENT  # releases' search attribute

#: Ledger event kinds. ``egress`` precedes the bytes; the others close a release.
EGRESS_EVENT = "egress"
RECEIPT_EVENT = "egress.receipt"
FAILED_EVENT = "egress.failed"

RELEASE_WORKFLOW_NAME = "ReleaseWorkflow"

#: How long a release waits for its second person by default: three days.
APPROVAL_S = 3 * 24 * 3600.0

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_RELEASE_ID = re.compile(r"^[0-9a-f]{32}$")


class EgressKind(StrEnum):
    READ = "read"
    EXPORT = "export"
    RELEASE = "release"
    #: Page images and fields handed to a reviewer (``custody review show``, the review page).
    REVIEW = "review"


class ReleaseState(StrEnum):
    RUNNING = "running"
    DELIVERED = "delivered"
    REFUSED = "refused"
    FAILED = "failed"
    #: Held for a second person (the policy's ``two_person``): nothing rendered yet.
    AWAITING_APPROVAL = "awaiting_approval"


Include = Literal["searchable_pdf", "page_images", "text"]


def check_name(value: str, what: str = "name") -> str:
    """Recipient and policy names are identifiers, never free text (they reach the UI)."""
    if not _NAME.match(value):
        raise ValueError(f"{what} must match [a-z0-9][a-z0-9_.-]{{0,62}}")
    return value


_MARK_FIELDS = frozenset({"recipient", "date", "policy", "release_id"})


class Policy(BaseModel):
    """What may leave and how: immutable once stored, pinned by its hash."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    applies_to: EgressKind = EgressKind.RELEASE
    #: What a release packet holds.
    include: tuple[Include, ...] = ("searchable_pdf",)
    #: The visible line printed on every released page, with these fields in braces:
    #: recipient, date, policy, release_id. The release id and its check code are
    #: printed in the page's band whatever the line says, so every page stays traceable.
    watermark: str = Field(
        default="Released to {recipient} · {date} · policy {policy} · release {release_id}",
        min_length=1,
        max_length=200,
    )
    #: Whether each released file carries a signed C2PA manifest.
    c2pa: bool = True
    #: Days after release during which the recipient may use the packet (informative).
    expires_after_days: int | None = Field(default=None, ge=1)
    #: Refuse a referral whose consent is false or unknown (activities.rules.consent).
    require_consent: bool = False
    #: "redacted": the packet holds each document's redacted view (activities.redact,
    #: the built-in ``default`` redaction policy) in place of the evidence's pages.
    view: Literal["original", "redacted"] = "original"
    #: The two-person rule: "always", every release under this policy waits for a second,
    #: different identity with the ``releaser`` role to approve it; "flagged", only a
    #: release of a document some rule flagged (fields for review, the review band).
    two_person: Literal["none", "always", "flagged"] = "none"
    #: The purpose of disclosure every release under this policy is recorded with
    #: (the accounting of disclosures), unless the request names its own.
    purpose: str | None = Field(default=None, min_length=1, max_length=200)

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # Left out at their defaults, so a stored policy keeps the hash it is pinned by.
        data: dict[str, object] = handler(self)
        for name, default in _POLICY_ADDITIONS.items():
            if name in data and data[name] == default:
                del data[name]
        return data

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value, "policy name")

    @field_validator("watermark")
    @classmethod
    def _template(cls, value: str) -> str:
        """Plain fields only: no format specs or conversions (``{recipient:>99999}``)."""
        try:
            parts = list(string.Formatter().parse(value))
        except ValueError:
            parts = [("", "?", "", None)]
        for _text, field, spec, conversion in parts:
            if field is not None and (field not in _MARK_FIELDS or spec or conversion):
                raise ValueError(
                    "watermark may use only {recipient}, {date}, {policy} and {release_id}"
                )
        if not value.isprintable():
            raise ValueError("watermark must be printable text")
        return value

    @field_validator("purpose")
    @classmethod
    def _purpose(cls, value: str | None) -> str | None:
        return None if value is None else check_purpose(value)

    @field_validator("include")
    @classmethod
    def _include(cls, value: tuple[Include, ...]) -> tuple[Include, ...]:
        if not value:
            raise ValueError("a policy must include at least one kind of file")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _view(self) -> Policy:
        # A redacted view is a checked PDF and its kept text; page images are not made.
        if self.view == "redacted" and "page_images" in self.include:
            raise ValueError("view: redacted releases searchable_pdf and text, not page_images")
        return self

    def canonical(self) -> bytes:
        return canonical_json(self)

    def sha256(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()


#: Fields added to ``Policy`` since policies were first pinned, with their defaults.
_POLICY_ADDITIONS: dict[str, object] = {
    "require_consent": False,
    "view": "original",
    "two_person": "none",
    "purpose": None,
}


def check_purpose(value: str) -> str:
    """A purpose of disclosure: one printable line (it reaches the ledger and history)."""
    if not value.strip() or not value.isprintable() or len(value) > 200:
        raise ValueError("a purpose is one printable line of at most 200 characters")
    return value.strip()


#: Built-in policies: ``default`` for releases; ``read`` and ``export`` name what
#: a tenant's own API key or operator takes out, so those events have a policy too.
DEFAULT_POLICY = Policy(name="default", include=("searchable_pdf",), c2pa=True)
READ_POLICY = Policy(name="read", applies_to=EgressKind.READ, include=("text",), c2pa=False)
EXPORT_POLICY = Policy(
    name="export", applies_to=EgressKind.EXPORT, include=("searchable_pdf", "text"), c2pa=False
)
REVIEW_POLICY = Policy(
    name="review", applies_to=EgressKind.REVIEW, include=("page_images", "text"), c2pa=False
)
BUILTIN_POLICIES = {p.name: p for p in (DEFAULT_POLICY, READ_POLICY, EXPORT_POLICY, REVIEW_POLICY)}


class ChannelKind(StrEnum):
    OUTBOX = "outbox"
    S3 = "s3"
    HTTPS = "https"


class Recipient(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    tenant: str | None
    kind: ChannelKind
    #: Directory, ``s3://bucket/prefix`` or URL. Never a secret.
    target: str
    created_at: datetime
    created_by: str
    #: S3 only: where the recipient's own credentials are, ``env:NAME`` or
    #: ``file:/PATH`` (activities.egress.s3_access); a reference, never the secret.
    credentials: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_name(value, "recipient name")

    @field_validator("credentials")
    @classmethod
    def _credentials(cls, value: str | None) -> str | None:
        return None if value is None else check_secret_ref(value)

    @model_serializer(mode="wrap")
    def _omit_no_credentials(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # Left out when unset, so a registration reads back as it was first stored.
        data: dict[str, object] = handler(self)
        if data.get("credentials") is None:
            data.pop("credentials", None)
        return data


_SECRET_REF = re.compile(r"^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:/[^\0]{1,4095})$")


def check_secret_ref(value: str) -> str:
    """A secret's reference: ``env:NAME`` (a variable) or ``file:/PATH`` (an absolute path)."""
    if not _SECRET_REF.match(value) or "\0" in value:
        raise ValueError("credentials must be a reference: env:NAME or file:/absolute/path")
    return value


class FileRef(BaseModel):
    name: str
    sha256: str
    bytes: int
    media_type: str


class PacketEntry(BaseModel):
    """One delivered file as ``custody egress ls`` lists it: what the recipient holds."""

    name: str
    sha256: str
    bytes: int


class EgressRecord(BaseModel):
    """One egress event as ``custody egress ls`` shows it; a release's ``files`` in the order
    its ``bytes_sha256`` (:func:`packet_sha256`) covers them."""

    kind: EgressKind
    release_id: str | None
    recipient: str | None
    actor: str
    tenant: str | None
    policy: str
    policy_sha256: str
    bytes_sha256: str
    documents: list[str]
    at: datetime
    seq: int
    files: list[PacketEntry] = Field(default_factory=list)
    #: The purpose of disclosure the event was recorded with (None before purposes).
    purpose: str | None = None


class DeliveryTuning(BaseModel):
    """How long delivery waits out a recipient that is down (settings, pinned at start)."""

    max_attempts: int = Field(default=8, ge=1)
    initial_interval_s: float = Field(default=5.0, gt=0)
    maximum_interval_s: float = Field(default=300.0, gt=0)


class ReleaseInput(BaseModel):
    release_id: str
    tenant: str | None
    recipient: str
    policy_sha256: str
    documents: list[str]
    actor: str
    requested_at: datetime
    delivery: DeliveryTuning = Field(default_factory=DeliveryTuning)
    #: Temporal task priority of every step (1 first .. 5; None: the default, 3), as a
    #: document's; the tenant is the fairness key (workflows.release).
    priority: int | None = Field(default=None, ge=1, le=5)
    #: The request's purpose of disclosure; None: the policy's (``Policy.purpose``).
    purpose: str | None = None
    #: How long a release held for a second person waits for one (two-person rule),
    #: then ends refused APPROVAL_EXPIRED with nothing rendered.
    approval_s: float = Field(default=APPROVAL_S, gt=0)


class SourceDoc(BaseModel):
    """A published document as the release reads it: keys and hashes from its signed record."""

    sha256: str
    source_key: str
    media_type: str
    pages: int
    pages_key: str
    text_key: str

    @classmethod
    def of(cls, record: ResultRecord) -> SourceDoc:
        """What a release reads of a published ``record`` (the caller checked its signature):
        each of these fields is the record's own of that name."""
        return cls(**fields_from(cls, record))


class ReleaseResult(BaseModel):
    release_id: str
    state: ReleaseState
    code: str | None = None
    tenant: str | None
    recipient: str
    policy: str | None = None
    policy_sha256: str
    files: list[FileRef] = Field(default_factory=list)
    documents: list[str] = Field(default_factory=list)
    receipt_key: str | None = None
    workflow_id: str
    attempts: dict[str, int] = Field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """What ``custody release --json`` prints and the edge answers: ids, hashes, codes."""
        return {
            "release_id": self.release_id,
            "state": self.state.value,
            "code": self.code,
            "recipient": self.recipient,
            "policy": self.policy,
            "policy_sha256": self.policy_sha256,
            "documents": self.documents,
            "files": [{"name": f.name, "sha256": f.sha256, "bytes": f.bytes} for f in self.files],
        }


class Delivered(BaseModel):
    """What the channel did, as the tenant, the result and the receipt see it.

    ``answer_sha256``: outbox and S3, the hash of what was written (keys, hashes,
    sizes, ETags); HTTPS, of the ZIP body sent, which the recipient holds. The
    recipient's own answer (its HTTP status and body hash) is the operator's alone,
    in the release's ``delivery.json``: shown to a tenant it would be a port and TLS
    oracle on whatever the tenant named. ``status`` is None in the tenant's view.
    """

    channel: ChannelKind
    location: str
    answer_sha256: str
    status: int | None = None
    already_delivered: bool = False
    #: The delivery attempt that got through, each attempt being one try (in
    #: older receipts: the tries inside one attempt).
    attempts: int = 1
    at: datetime

    @property
    def attempt(self) -> int:
        """As every step's result states it."""
        return self.attempts


class Receipt(BaseModel):
    """Signed after delivery: the proof of exactly what reached whom."""

    release_id: str
    tenant: str | None
    recipient: str
    policy: str
    policy_sha256: str
    files: list[FileRef]
    sources: list[str]
    packet_sha256: str
    manifest_sha256s: dict[str, str] = Field(default_factory=dict)
    delivery: Delivered
    egress_event_seq: int
    egress_event_hash: str
    workflow_id: str
    run_id: str
    signed_at: datetime


def release_id(tenant: str | None, recipient: str, policy_sha256: str, docs: list[str]) -> str:
    """One id per (tenant, recipient, policy, set of documents): requests converge on it."""
    body = canonical_json(
        {
            "tenant": ids.scope(tenant),
            "recipient": recipient,
            "policy": policy_sha256,
            "documents": sorted(set(docs)),
        }
    )
    return hashlib.sha256(body).hexdigest()[:32]


def check_release_id(value: str) -> str:
    if not _RELEASE_ID.match(value):
        raise ValueError("a release id is 32 lower-case hex characters")
    return value


def release_workflow_id(rid: str) -> str:
    return f"release-{rid}"


def packet_listing(files: list[FileRef]) -> bytes:
    """RFC 8785 canonical JSON ``{"files": [{"name", "sha256", "bytes"}, ...]}``, in the
    release's order; stored beside the release (:func:`release_packet_key`)."""
    listing = [{"name": f.name, "sha256": f.sha256, "bytes": f.bytes} for f in files]
    return canonical_json({"files": listing})


def packet_sha256(files: list[FileRef]) -> str:
    """The SHA-256 of a packet: of the canonical list of its files' names and hashes."""
    return hashlib.sha256(packet_listing(files)).hexdigest()


# --- store keys ---------------------------------------------------------------


def _release_prefix(tenant: str | None, rid: str) -> str:
    return f"egress/{ids.scope(tenant)}/releases/{rid}/"


def release_file_key(tenant: str | None, rid: str, name: str) -> str:
    return f"{_release_prefix(tenant, rid)}files/{name}"


def release_packet_key(tenant: str | None, rid: str) -> str:
    """The packet's listing (:func:`packet_listing`): its SHA-256 is the release's packet hash."""
    return f"{_release_prefix(tenant, rid)}packet.json"


def release_event_key(tenant: str | None, rid: str) -> str:
    """Create-only marker of the release's egress event: it is appended once."""
    return f"{_release_prefix(tenant, rid)}event.json"


def release_delivery_key(tenant: str | None, rid: str) -> str:
    return f"{_release_prefix(tenant, rid)}delivery.json"


def receipt_key(tenant: str | None, rid: str) -> str:
    return f"{_release_prefix(tenant, rid)}receipt.json"


def releases_prefix(tenant: str | None) -> str:
    return f"egress/{ids.scope(tenant)}/releases/"


def by_file_key(file_sha256: str) -> str:
    """Before the index was per tenant: the first release of these bytes, any tenant's.
    Read only (``egress identify`` takes an entry naming the tenant asking), never written."""
    if not _SHA.match(file_sha256):
        raise ValueError("not a SHA-256")
    return f"egress/by-file/{file_sha256}.json"


def by_file_prefix(tenant: str | None, file_sha256: str) -> str:
    """The tenant's releases that carried a file with these bytes, one entry each."""
    if not _SHA.match(file_sha256):
        raise ValueError("not a SHA-256")
    return f"egress/{ids.scope(tenant)}/by-file/{file_sha256}/"


def egress_index_key(tenant: str | None, seq: int) -> str:
    """Marker of an egress event in the tenant's ledger, so queries need not scan it all."""
    return f"egress/{ids.scope(tenant)}/index/{seq:012d}"


def egress_index_prefix(tenant: str | None) -> str:
    return f"egress/{ids.scope(tenant)}/index/"


def egress_documents_key(tenant: str | None, ref: str) -> str:
    """The documents and salts of an egress event of several (custody.state.egress)."""
    return f"egress/{ids.scope(tenant)}/documents/{ref}.json"


def policy_key(tenant: str | None, name: str, version: int) -> str:
    return f"policies/{ids.scope(tenant)}/{check_name(name)}/{version:06d}.json"


def policy_prefix(tenant: str | None, name: str | None = None) -> str:
    base = f"policies/{ids.scope(tenant)}/"
    return base if name is None else f"{base}{check_name(name)}/"


def policy_by_hash_key(tenant: str | None, sha256: str) -> str:
    return f"policies/{ids.scope(tenant)}/by-hash/{sha256}.json"


def recipient_key(tenant: str | None, name: str) -> str:
    return f"recipients/{ids.scope(tenant)}/{check_name(name)}.json"


def recipient_revoked_key(tenant: str | None, name: str) -> str:
    """A revocation made before revocations were versions: a marker, still honoured."""
    return f"recipients/{ids.scope(tenant)}/{check_name(name)}.revoked"


def recipient_revocation_prefix(tenant: str | None, name: str) -> str:
    """The recipient's revocation, as signed, chained versions (custody.state.versions)."""
    return f"recipients/{ids.scope(tenant)}/{check_name(name)}/revocation/"


def recipients_prefix(tenant: str | None) -> str:
    return f"recipients/{ids.scope(tenant)}/"
