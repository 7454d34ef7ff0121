"""Task-queue and search-attribute names shared by starter, workflow and workers."""

from __future__ import annotations

from temporalio.common import Priority, SearchAttributeKey

#: Workflows and the I/O activities (stage, validate, check, publish).
IO_TASK_QUEUE = "custody-io"
#: The CPU-bound OCR activity, so its pool scales apart from I/O.
OCR_TASK_QUEUE = "custody-ocr"
#: The GPU OCR pool's own queue (deploy/k8s): documents submitted with
#: ``CUSTODY_OCR_TASK_QUEUE`` set to it are recognised there.
OCR_GPU_TASK_QUEUE = "custody-ocr-gpu"

WORKFLOW_NAME = "DocumentWorkflow"

# Custom search attributes (Keyword), registered when the stack starts. They
# hold hashes, codes and identifiers only: Temporal does not encrypt them.
SA_STATE = "CustodyState"
SA_TENANT = "CustodyTenant"
SA_SOURCE_ID = "CustodySourceId"
SA_REASON = "CustodyReason"
SA_SHA256 = "CustodySha256"
#: A release's recipient (custody.egress): a registered name, never an address.
SA_RECIPIENT = "CustodyRecipient"
SEARCH_ATTRIBUTES: tuple[str, ...] = (
    SA_STATE,
    SA_TENANT,
    SA_SOURCE_ID,
    SA_REASON,
    SA_SHA256,
    SA_RECIPIENT,
)
#: The typed keys workflows upsert them with (one place, not one per workflow).
STATE_KEY = SearchAttributeKey.for_keyword(SA_STATE)
REASON_KEY = SearchAttributeKey.for_keyword(SA_REASON)
TENANT_KEY = SearchAttributeKey.for_keyword(SA_TENANT)
RECIPIENT_KEY = SearchAttributeKey.for_keyword(SA_RECIPIENT)

# Scheduling inside a task queue (Temporal priority and fairness; the server needs
# ``matching.enableFairness``). Lower goes first; within one priority, tenants
# share the queue by fairness key, so one tenant's storm cannot starve another.
PRIORITY_RESERVED = 1  # the reserved admission lane: urgent documents jump the backlog
_PRIORITY_DEFAULT = 3
_NO_TENANT_KEY = "_"


def fairness_key(tenant: str | None) -> str:
    """The tenant's fairness key; tenant names are at most 63 bytes, under Temporal's 64."""
    return tenant or _NO_TENANT_KEY


# Backlog-aware weights. Temporal's fairness is stride scheduling per key: each
# task advances its key's pass by 1/weight when it is queued, and the queue hands
# out the lowest pass first. Equal weights split a busy queue evenly, so a light
# tenant arriving behind a storm still waits for one storm task per task of its
# own. A document submitted while its tenant already has more than
# FAIR_SHARE_DOCS running gets weight FAIR_SHARE_DOCS / backlog: the storm's
# later tasks step far ahead, and a few documents from a quiet tenant go first.
# Alone, a tenant still has the whole queue: weights only order contended work.
#: Documents a tenant may have in flight before its new ones yield.
FAIR_SHARE_DOCS = 4
#: Even a deep backlog moves: one of its tasks per 20 of a full-weight tenant's.
MIN_FAIRNESS_WEIGHT = 0.05


def backlog_weight(in_flight: int, share: int = FAIR_SHARE_DOCS) -> float:
    """The fairness weight of a new document whose tenant has ``in_flight`` running."""
    if in_flight <= share:
        return 1.0
    return max(MIN_FAIRNESS_WEIGHT, round(share / in_flight, 3))


def scheduling(tenant: str | None, priority: int | None, weight: float | None) -> Priority:
    """A document's place in every queue it enters: its workflow tasks and its steps."""
    return Priority(
        priority_key=priority, fairness_key=fairness_key(tenant), fairness_weight=weight
    )
