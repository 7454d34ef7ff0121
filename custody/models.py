"""Contracts between the starter, the workflow and the activities.

One input model and one result model per workflow and activity. Everything
here travels through Temporal history, so it holds references (object keys
and their signatures, see ``custody.refs``), hashes, counts, codes and times:
never document bytes, page images or text.
Page text lives only in the object store (``PageText`` is written there).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from custody.doctypes.spec import TYPE_NAME
from custody.queues import IO_TASK_QUEUE, OCR_TASK_QUEUE


class DocState(StrEnum):
    ACCEPTED = "accepted"
    STAGED = "staged"
    VALIDATED = "validated"
    RECOGNISED = "recognised"
    PUBLISHED = "published"
    REJECTED = "rejected"
    QUARANTINED = "quarantined"
    #: Waiting for a person's decision (workflows.review): not an end, the run is open.
    REVIEW = "review"
    #: The workflow was cancelled: its own outcome, the reason kept.
    CANCELLED = "cancelled"


_TERMINAL_STATES: frozenset[DocState] = frozenset(
    {DocState.PUBLISHED, DocState.REJECTED, DocState.QUARANTINED, DocState.CANCELLED}
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def fields_from(model: type[BaseModel], source: object) -> dict[str, Any]:
    """``source``'s values of ``model``'s fields, by name: one model read off another that
    holds all of its fields (a status off a result, a release's source off its record)."""
    return {name: getattr(source, name) for name in model.model_fields}


def fields_among(
    model: type[BaseModel], *sources: BaseModel | Mapping[str, Any], **given: Any
) -> dict[str, Any]:
    """``model``'s fields: those ``given``, the rest by name off the one of ``sources`` that
    holds each (a step's input put together from the document and the results before it).

    A field none of them holds keeps its default. One that two of them hold must be
    given, so which value counts is said where the model is built, never left to the
    order of ``sources``.
    """
    found = dict(given)
    for name in model.model_fields:
        if name in given:
            continue
        holders = [s for s in sources if name in _names(s)]
        if len(holders) > 1:
            raise TypeError(f"{model.__name__}.{name}: held by {len(holders)} sources, give it")
        if holders:
            found[name] = _value(holders[0], name)
    return found


def _names(source: BaseModel | Mapping[str, Any]) -> Mapping[str, object]:
    return source if isinstance(source, Mapping) else type(source).model_fields


def _value(source: BaseModel | Mapping[str, Any], name: str) -> Any:
    return source[name] if isinstance(source, Mapping) else getattr(source, name)


class StepResult(_Model):
    """What a step's result carries beside its own fields: the attempt that made it,
    and the worker that ran it (``pid@host``, stamped by ``activities.faults.coded``)."""

    attempt: int = 1
    worker: str | None = None


#: Review's defaults (custody.reviews): escalated after 2 days, expired after 6, under
#: the scratch age (7 days) that would take the OCR output a reviewer looks at.
REVIEW_DEADLINE_S, REVIEW_EXPIRY_S = 2 * 86400.0, 6 * 86400.0


def omit_none(data: dict[str, object], *names: str) -> dict[str, object]:
    """``data`` without the members ``names`` where they are None (a model's wrap serializer).

    A field added to a model after its messages were first signed or sent stays out
    of the JSON while it is unset, so an older record keeps its bytes (and hash) and
    a worker from before the field still reads the input.
    """
    for name in names:
        if data.get(name) is None:
            data.pop(name, None)
    return data


class Transition(_Model):
    state: DocState
    at: datetime
    #: Who made it: the worker that ran the step before it (``pid@host``, Temporal's
    #: worker identity) or the person who decided (an identity's name). Left out of
    #: the JSON when unknown, so records signed before owners serialise unchanged.
    by: str | None = None

    @model_serializer(mode="wrap")
    def _omit_unknown_owner(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        return omit_none(handler(self), "by")


# --- workflow -----------------------------------------------------------------


class DocumentInput(_Model):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    tenant: str | None = None
    source_id: str | None = None
    intake_key: str
    size_bytes: int = Field(ge=0)
    submitted_at: datetime
    io_task_queue: str = IO_TASK_QUEUE
    ocr_task_queue: str = OCR_TASK_QUEUE
    signer: dict[str, str] = Field(default_factory=dict)
    #: When the scan was captured, as the submitter states it (else submitted_at).
    captured_at: datetime | None = None
    #: HMAC of (intake_key, tenant, sha256) by the starter (custody.refs); None in
    #: histories from before references were signed.
    intake_sig: str | None = None
    #: Temporal task priority for every step (1 first .. 5; None: the default, 3).
    #: The reserved admission lane's documents carry ``queues.PRIORITY_RESERVED``.
    priority: int | None = Field(default=None, ge=1, le=5)
    #: The tenant's share of a busy queue against other tenants (Temporal fairness;
    #: None: 1.0, or the server's override for the tenant's key).
    fairness_weight: float | None = Field(default=None, gt=0)
    #: The document's type as the submitter names it: a custody.fields.DocType value
    #: or a type the tenant's fields policy configures (by name, so histories from
    #: before configured types decode the same); None: Custody classifies it among
    #: the types the tenant's policy expects.
    document_type: str | None = Field(default=None, pattern=TYPE_NAME)
    #: A document that needs a person waits this long before it is escalated, and
    #: this long before it expires (quarantined REVIEW_EXPIRED; workflows.review).
    review_deadline_s: float = Field(default=REVIEW_DEADLINE_S, gt=0)
    review_expiry_s: float = Field(default=REVIEW_EXPIRY_S, gt=0)


class DocumentResult(_Model):
    sha256: str
    tenant: str | None
    state: DocState
    code: str | None = None
    #: Attempts per step (stage, validate, ocr, check, publish), as recorded.
    attempts: dict[str, int] = Field(default_factory=dict)
    pages: int = 0
    mean_confidence: float | None = None
    record_key: str | None = None
    text_key: str | None = None
    workflow_id: str
    run_id: str
    transitions: list[Transition] = Field(default_factory=list)


class DocumentStatus(_Model):
    """What the ``status`` query answers: safe for any operator to see."""

    sha256: str
    tenant: str | None
    state: DocState
    code: str | None = None
    attempts: dict[str, int] = Field(default_factory=dict)
    pages: int = 0
    transitions: list[Transition] = Field(default_factory=list)

    @classmethod
    def of(cls, result: DocumentResult) -> DocumentStatus:
        """What a finished run's status shows of its result."""
        return cls(**fields_from(cls, result))


# --- activities ---------------------------------------------------------------


class StageInput(_Model):
    sha256: str
    tenant: str | None
    intake_key: str
    intake_sig: str | None = None


class StageResult(_Model):
    source_key: str
    size_bytes: int
    attempt: int = 1
    source_sig: str | None = None
    #: The worker that ran the step (``pid@host``), stamped by ``activities.faults.coded``.
    worker: str | None = None


class EventRef(_Model):
    """A pointer into the audit ledger: sequence number and event hash."""

    seq: int
    hash: str


class ValidateInput(_Model):
    sha256: str
    tenant: str | None
    source_key: str
    # The evidence packet, recorded once validation passes and before OCR.
    source_id: str | None = None
    size_bytes: int = 0
    captured_at: datetime | None = None
    signer: dict[str, str] = Field(default_factory=dict)
    source_sig: str | None = None


class ValidationResult(_Model):
    media_type: str
    pages: int
    policy_version: str
    packet_event: EventRef | None = None
    attempt: int = 1
    worker: str | None = None


class EvidencePacket(_Model):
    """What is known of a document before any OCR runs on it."""

    sha256: str
    size_bytes: int
    media_type: str
    pages: int
    source_id: str | None
    tenant: str | None
    captured_at: datetime | None
    signer: dict[str, str]
    policy_version: str
    workflow_id: str
    run_id: str


class OcrInput(_Model):
    sha256: str
    tenant: str | None
    source_key: str
    media_type: str
    pages: int
    source_sig: str | None = None


class OcrResult(_Model):
    pages: int
    page_keys: list[str]
    page_confidences: list[float]
    mean_confidence: float
    chars: int
    engine: str
    engine_version: str
    params: dict[str, str | int | float | bool]
    model_hashes: dict[str, str] = Field(default_factory=dict)
    seconds: float
    attempt: int = 1
    #: One signature per page key, in order (custody.refs).
    page_sigs: list[str] = Field(default_factory=list)
    #: Pages read from the PDF's own text layer instead of OCR, and each one's
    #: ``textlayer.layer_sha256``, in the same order.
    text_layer_pages: list[int] = Field(default_factory=list)
    text_layer_sha256: list[str] = Field(default_factory=list)
    #: The searchable PDF: "built" (scratch ``pdf_key``, signed ``pdf_sig``),
    #: "original" (every page came from the text layer: the source is searchable
    #: as it is) or "none" (results from before searchable output).
    searchable: Literal["none", "built", "original"] = "none"
    pdf_key: str | None = None
    pdf_sig: str | None = None
    worker: str | None = None


class CheckInput(_Model):
    sha256: str
    tenant: str | None
    expected_pages: int
    page_keys: list[str]
    page_sigs: list[str] = Field(default_factory=list)
    document_type: str | None = Field(default=None, pattern=TYPE_NAME)
    #: Review is a state (workflows.review): what needs a person is reported in
    #: ``review_reasons`` instead of quarantining (False: as workflows before it).
    review: bool = False


class CheckResult(_Model):
    text_sha256: str
    chars: int
    mean_confidence: float
    page_confidences: list[float]
    band: str
    attempt: int = 1
    #: The fields read (activities.rules): the sealed object's scratch key and its
    #: signature, and the type. Values stay in the object; history has names only.
    document_type: str | None = None
    fields_key: str | None = None
    fields_sig: str | None = None
    #: Fields the policy requires that were not read surely, or that break a rule.
    fields_review: list[str] = Field(default_factory=list)
    worker: str | None = None
    #: With ``CheckInput.review``: why a person must look (LOW_CONFIDENCE, REVIEW_BAND,
    #: LANGUAGE_MISMATCH, FIELDS_MISSING, FIELD_INVALID); empty: publish as read.
    review_reasons: list[str] = Field(default_factory=list)


class PublishInput(_Model):
    """What publish needs: page keys and signatures from ``ocr``, the text hash from ``check``."""

    sha256: str
    tenant: str | None
    source_id: str | None
    source_key: str
    size_bytes: int
    media_type: str
    policy_version: str
    ocr: OcrResult
    check: CheckResult
    transitions: list[Transition]
    attempts: dict[str, int]
    workflow_id: str
    run_id: str
    packet_event: EventRef | None = None
    captured_at: datetime | None = None
    signer: dict[str, str] = Field(default_factory=dict)
    source_sig: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_old_copies(cls, data: object) -> object:
        # Inputs scheduled by older workflows also carried these flat, copied from
        # ``ocr`` and ``check``: the nested ones are the same values, and the ones
        # publish verifies (signatures, text hash), so the copies are dropped. Any
        # other unknown field is still refused (extra="forbid").
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in _PUBLISH_COPIES}
        return data


_PUBLISH_COPIES = frozenset({"page_keys", "text_sha256", "page_sigs"})


class PublishResult(_Model):
    record_key: str
    text_key: str
    created: bool
    attempt: int = 1
    worker: str | None = None


class ConcludeInput(_Model):
    """Record a rejection or quarantine durably, beside the kept source."""

    sha256: str
    tenant: str | None
    source_id: str | None
    state: DocState
    code: str
    attempts: dict[str, int]
    transitions: list[Transition]
    workflow_id: str
    run_id: str
    source_key: str | None = None
    #: The type it was submitted as (DocumentInput.document_type), so a release from
    #: quarantine runs it as that type again; None: classified, or an older outcome.
    document_type: str | None = Field(default=None, pattern=TYPE_NAME)


class ConcludeResult(_Model):
    outcome_key: str
    created: bool
    worker: str | None = None


# --- stored objects (never through history) ------------------------------------


class Word(_Model):
    text: str
    confidence: float
    box: list[list[int]]


class Mark(_Model):
    """A small square box on the page (a checkbox) and how much ink is inside it."""

    box: list[int]  # [x0, y0, x1, y1] in the page's pixels
    ink: float  # share of dark pixels inside the border, 0..1


class PageText(_Model):
    page: int
    width: int
    height: int
    text: str
    words: list[Word]
    mean_confidence: float
    seconds: float
    #: Which produced the page: the OCR engine, or the PDF's own text layer.
    source: Literal["ocr", "text-layer"] = "ocr"
    #: Checkboxes seen on the page image (activities.fields.marks): OCR rarely
    #: reads a tick or a cross, so consent is read from these. Empty on pages
    #: from before marks were recorded and on text-layer pages.
    marks: list[Mark] = Field(default_factory=list)


class ResultRecord(_Model):
    """The published fact for one document; created once, never overwritten.

    Stored signed, inside a ``SignedRecord``. Fields added since version 2 are
    left out of its JSON while at their defaults, so a record signed before
    they existed still serialises to the bytes that were signed.
    """

    schema_version: int = 3
    sha256: str
    tenant: str | None
    source_id: str | None
    source_key: str
    size_bytes: int
    media_type: str
    policy_version: str
    pages: int
    page_confidences: list[float]
    mean_confidence: float
    confidence_band: str
    text_key: str
    pages_key: str
    text_sha256: str
    pages_sha256: str = ""
    chars: int
    engine: str
    engine_version: str
    ocr_params: dict[str, str | int | float | bool]
    model_hashes: dict[str, str]
    ocr_seconds: float
    transitions: list[Transition]
    attempts: dict[str, int]
    workflow_id: str
    run_id: str
    published_at: datetime
    captured_at: datetime | None = None
    signer: dict[str, str] = Field(default_factory=dict)
    packet_event: EventRef | None = None
    #: Pages taken from the PDF's text layer, and each one's text hash (OcrResult).
    text_layer_pages: list[int] = Field(default_factory=list)
    text_layer_sha256: list[str] = Field(default_factory=list)
    #: The searchable PDF: "built" (stored at ``pdf_key``, beside the text),
    #: "original" (``pdf_key`` is the source itself) or "none" (older records).
    searchable: Literal["none", "built", "original"] = "none"
    pdf_key: str | None = None
    pdf_sha256: str = ""
    #: The fields read (custody.fields.Extraction, stored beside the text) and
    #: the names of those a person must review; none on records from before fields.
    document_type: str | None = None
    fields_key: str | None = None
    fields_sha256: str = ""
    fields_review: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        for name, default in _ADDED_SINCE_V2.items():
            if name in data and data[name] == default:
                del data[name]
        return data


# Their defaults, as JSON: a record holding exactly these is an older record.
_ADDED_SINCE_V2: dict[str, object] = {
    "text_layer_pages": [],
    "text_layer_sha256": [],
    "searchable": "none",
    "pdf_key": None,
    "pdf_sha256": "",
    "document_type": None,
    "fields_key": None,
    "fields_sha256": "",
    "fields_review": [],
}


class RecordSignature(_Model):
    alg: str
    kid: str
    sig: str


class SignedRecord(_Model):
    """The record and an Ed25519 signature over its canonical JSON."""

    record: ResultRecord
    signature: RecordSignature


class OutcomeRecord(ConcludeInput):
    """A rejection or quarantine, kept so nothing is silently dropped."""

    schema_version: int = 1
    concluded_at: datetime
