"""A document in review: what the review workflow carries, what a decision is, what it answers.

Light on purpose: the document workflow hands over to the review workflow
(``workflows.review``), the review activities apply a decision
(``activities.review``), and callers list, show and resolve reviews
(``starter.client.review``); all of them agree on these models.

Everything here travels through Temporal history, so it holds references,
hashes, names and codes, never a value read or typed: a correction travels
as a sealed store object (``corrections_key``, its signed reference and its
hash), and the decision naming the reviewer is signed by the reviewer's own
key (``custody.operators``).

    reviews/<tenant or _>/<sha256>/corrections-<sha256[:16]>.json  what a reviewer typed
    results/<tenant or _>/<sha256>/review-<decision sha256[:16]>.json  the derived version
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from custody import ids
from custody.errors import REVIEW_REJECT_CODES, Code
from custody.models import (
    REVIEW_DEADLINE_S,
    REVIEW_EXPIRY_S,
    CheckResult,
    DocState,
    DocumentInput,
    OcrResult,
    StageResult,
    StepResult,
    Transition,
    ValidationResult,
)

REVIEW_WORKFLOW_NAME = "DocumentReview"
#: The runs a concluded document continues as, so the Temporal UI's list (status, type,
#: id) tells a rejected or quarantined document from a published one (workflows.outcomes).
REJECTED_WORKFLOW_NAME = "DocumentRejected"
QUARANTINED_WORKFLOW_NAME = "DocumentQuarantined"
#: The document workflow's update for ``custody quarantine release`` (update-with-start).
RELEASE_UPDATE = "release_from_quarantine"
#: The update that delivers a decision; the query that describes the wait.
DECIDE_UPDATE = "decide"
REVIEW_QUERY = "review"
#: The ledger events of a review.
REVIEWED, REVIEW_OVERDUE = "reviewed", "review_overdue"
#: The search attribute's reason once a review is past its deadline (escalated).
OVERDUE_REASON = "REVIEW_OVERDUE"
#: A document in the review band (mean confidence under the review line) waits too.
REVIEW_BAND = "REVIEW_BAND"
#: Released from quarantine by a person: it waits for a reviewer's attestation.
RELEASED = "RELEASED_FROM_QUARANTINE"
#: How long a review waits before it is escalated, and before it expires (quarantined
#: REVIEW_EXPIRED): under the scratch age (7 days), which would take its OCR output.
DEADLINE_S, EXPIRY_S = REVIEW_DEADLINE_S, REVIEW_EXPIRY_S


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ReviewInput(_Model):
    """Where the document workflow stopped: every step's result, references only."""

    document: DocumentInput
    staged: StageResult
    valid: ValidationResult
    ocr: OcrResult
    check: CheckResult
    transitions: list[Transition]
    attempts: dict[str, int]
    #: Why a person must look: codes (LOW_CONFIDENCE, FIELDS_MISSING, REVIEW_BAND ...).
    reasons: list[str]
    deadline_s: float = Field(default=DEADLINE_S, gt=0)
    expiry_s: float = Field(default=EXPIRY_S, gt=0)
    #: The person who released it from quarantine, when that is how it came here.
    released_by: str | None = None
    #: The page images reviewers see (``review_pages``); empty if they could not be made.
    page_keys: list[str] = Field(default_factory=list)


class Decision(_Model):
    """The update's argument: a signed decision and where its sealed corrections are.

    ``decision`` is a ``custody.operators.SignedDecision`` as JSON; its subject
    names the document, the verdict, the reject code and the corrections' key
    and hash, so nothing here can be swapped without breaking the signature.
    """

    decision: str
    verdict: Literal["approve", "reject"]
    reject_code: str | None = None
    corrections_key: str | None = None
    corrections_sig: str | None = None
    #: Field names and (page, line) pairs corrected: names and numbers, never values.
    fields: list[str] = Field(default_factory=list)
    lines: list[tuple[int, int]] = Field(default_factory=list)


class QuarantineRelease(_Model):
    """A person's release of a quarantined document: it runs again and waits in review."""

    by: str
    decision_sha256: str
    decision_key: str


class Accepted(StepResult):
    """A decision checked against the identity registry and its sealed corrections."""

    reviewed_by: str
    decision_sha256: str


class Answer(_Model):
    """What a reviewer is told once the decision took effect."""

    state: DocState
    reviewed_by: str
    code: str | None = None


class RecordReviewInput(_Model):
    """What ``accept`` checks a decision against and ``record`` keeps it beside."""

    sha256: str
    tenant: str | None
    decision: Decision
    reviewed_by: str
    record_key: str | None = None
    #: The fields read: the published copy once published, else the check's scratch copy.
    fields_key: str | None = None
    fields_sig: str | None = None
    text_sha256: str
    page_keys: list[str]
    page_sigs: list[str] = Field(default_factory=list)
    workflow_id: str
    run_id: str


class RecordReviewResult(StepResult):
    review_key: str
    review_sha256: str
    created: bool


class OverdueInput(_Model):
    sha256: str
    tenant: str | None
    reasons: list[str]
    waited_s: float


class OverdueResult(StepResult):
    """The escalation's answer: nothing beyond its attempt and worker."""


class ReviewStatus(_Model):
    """What the ``review`` query answers: enough to list and show, no content."""

    sha256: str
    tenant: str | None
    reasons: list[str]
    fields_needing_review: list[str]
    waiting_since: datetime
    overdue: bool = False
    decided: bool = False
    pages: int = 0
    document_type: str | None = None
    released_by: str | None = None
    #: The page images (sealed PNGs at REVIEW_DPI), once rendered; empty until then.
    page_keys: list[str] = Field(default_factory=list)
    #: Where the fields and the text read are (scratch, signed references).
    fields_key: str | None = None
    fields_sig: str | None = None
    text_keys: list[str] = Field(default_factory=list)
    text_sigs: list[str] = Field(default_factory=list)


def review_workflow_id(sha256: str, tenant: str | None) -> str:
    """The document's own workflow id: a review is the same document, continued."""
    return ids.workflow_id(sha256, tenant)


def corrections_key(sha256: str, tenant: str | None, corrections_sha256: str) -> str:
    return f"reviews/{ids.scope(tenant)}/{sha256}/corrections-{corrections_sha256[:16]}.json"


def review_key(sha256: str, tenant: str | None, decision_sha256: str) -> str:
    return f"results/{ids.scope(tenant)}/{sha256}/review-{decision_sha256[:16]}.json"


def reject_codes() -> list[str]:
    return [c.value for c in REVIEW_REJECT_CODES]


def reject_code(code: str) -> Code:
    """``code`` if it is one of the fixed reject codes; else a usage error's detail."""
    if code not in reject_codes():
        raise ValueError(f"--reject takes one of {', '.join(reject_codes())}")
    return Code(code)


#: Page images for reviewers are rendered at this resolution (boxes scale from the OCR's).
REVIEW_DPI = 100


class ReviewPagesInput(_Model):
    sha256: str
    tenant: str | None
    source_key: str
    source_sig: str | None = None
    media_type: str
    pages: int


class ReviewPagesResult(StepResult):
    """Where each page's image is (sealed PNGs in the store), in page order."""

    keys: list[str]
    dpi: int = REVIEW_DPI


def page_image_key(sha256: str, tenant: str | None, page: int) -> str:
    """Page ``page`` (from 1) as a reviewer sees it."""
    return f"reviews/{ids.scope(tenant)}/{sha256}/page-{page:04d}.png"
