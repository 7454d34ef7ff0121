"""Task-queue and search-attribute names shared by starter, workflow and workers."""

from __future__ import annotations

#: Workflows and the I/O activities (stage, validate, check, publish).
IO_TASK_QUEUE = "custody-io"
#: The CPU-bound OCR activity, so its pool scales apart from I/O.
OCR_TASK_QUEUE = "custody-ocr"

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
