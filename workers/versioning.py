"""Worker Versioning: each workflow type's behaviour across builds, stated on purpose.

A versioned worker (``CUSTODY_DEPLOYMENT_NAME`` and ``CUSTODY_BUILD_ID`` set,
:func:`workers.common.deployment_config`) registers these subclasses instead
of the plain workflow classes: the same names and code, with a versioning
behaviour the server requires of every workflow on a versioned worker. An
unversioned worker must not state one (the server refuses the workflow task),
which is why the behaviour is not on the base classes. Why each behaviour:
deploy/RUNBOOK.md, "Worker Versioning".

- ``DocumentWorkflow`` is PINNED: a document runs for minutes and finishes on
  the build it started on, so a change to its steps never meets a history
  recorded by another build, and its evidence names one build.
- ``PreviewWorkflow`` and ``RedactWorkflow`` are PINNED: one activity long,
  seconds or minutes, they finish on the build they started on.
- ``ReleaseWorkflow`` is AUTO_UPGRADE: a release can keep retrying delivery
  through a recipient's outage for a long time; on the next workflow task it
  moves to the current build, so a delivery fix reaches it, at the price that
  every change to it must replay (deploy/replay_gate.py) or be patched.
- ``ReviewWorkflow`` (``DocumentReview``) is AUTO_UPGRADE: a document that needs
  a person continues as it (same id) and may wait for days; the document's own
  minutes stay pinned, the wait moves to the current build at its next task.
- ``DocumentRejected`` and ``DocumentQuarantined`` are PINNED: each completes in
  its first task, stating a concluded document's outcome (workflows.outcomes).
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import VersioningBehavior

from workflows.document import DocumentWorkflow
from workflows.outcomes import QuarantinedDocument, RejectedDocument
from workflows.preview import PreviewWorkflow
from workflows.redact import RedactWorkflow
from workflows.release import ReleaseWorkflow
from workflows.review import ReviewWorkflow

# As in the workflow modules: the models are passed through the sandbox, so the
# classes here are the ones the workflows build and the converter decodes.
with workflow.unsafe.imports_passed_through():
    from custody.egress import RELEASE_WORKFLOW_NAME, ReleaseInput, ReleaseResult
    from custody.models import DocumentInput, DocumentResult
    from custody.previews import PREVIEW_WORKFLOW_NAME, PreviewInput, PreviewResult
    from custody.queues import WORKFLOW_NAME
    from custody.redactions import REDACT_WORKFLOW_NAME, RedactInput, RedactResult
    from custody.reviews import (
        QUARANTINED_WORKFLOW_NAME,
        REJECTED_WORKFLOW_NAME,
        REVIEW_WORKFLOW_NAME,
        ReviewInput,
    )


@workflow.defn(name=WORKFLOW_NAME, versioning_behavior=VersioningBehavior.PINNED)
class PinnedDocumentWorkflow(DocumentWorkflow):
    """DocumentWorkflow on a versioned worker: pinned to the build that started it."""

    # The SDK wants the run method on the decorated class itself; queries are inherited.
    @workflow.run
    async def run(self, inp: DocumentInput) -> DocumentResult:
        return await super().run(inp)


@workflow.defn(name=RELEASE_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.AUTO_UPGRADE)
class UpgradingReleaseWorkflow(ReleaseWorkflow):
    """ReleaseWorkflow on a versioned worker: moves to the current build."""

    @workflow.run
    async def run(self, inp: ReleaseInput) -> ReleaseResult:
        return await super().run(inp)


@workflow.defn(name=PREVIEW_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.PINNED)
class PinnedPreviewWorkflow(PreviewWorkflow):
    """PreviewWorkflow on a versioned worker: seconds long, on the build that started it."""

    @workflow.run
    async def run(self, inp: PreviewInput) -> PreviewResult:
        return await super().run(inp)


@workflow.defn(name=REDACT_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.PINNED)
class PinnedRedactWorkflow(RedactWorkflow):
    """RedactWorkflow on a versioned worker: one view, on the build that started it."""

    @workflow.run
    async def run(self, inp: RedactInput) -> RedactResult:
        return await super().run(inp)


@workflow.defn(name=REVIEW_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.AUTO_UPGRADE)
class UpgradingReviewWorkflow(ReviewWorkflow):
    """ReviewWorkflow on a versioned worker: a review waits for days, across deploys, so it
    moves to the current build at its next task (its histories replay: deploy/replay_gate.py)."""

    @workflow.run
    async def run(self, inp: ReviewInput) -> DocumentResult:
        return await super().run(inp)


@workflow.defn(name=REJECTED_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.PINNED)
class PinnedRejectedDocument(RejectedDocument):
    """A rejected document's last run: it completes in its first task."""

    @workflow.run
    async def run(self, result: DocumentResult) -> DocumentResult:
        return await super().run(result)


@workflow.defn(name=QUARANTINED_WORKFLOW_NAME, versioning_behavior=VersioningBehavior.PINNED)
class PinnedQuarantinedDocument(QuarantinedDocument):
    """A quarantined document's last run: it completes in its first task."""

    @workflow.run
    async def run(self, result: DocumentResult) -> DocumentResult:
        return await super().run(result)


#: What the I/O worker registers: plain, or each with its versioning behaviour.
WORKFLOWS: list[type] = [
    DocumentWorkflow,
    ReleaseWorkflow,
    PreviewWorkflow,
    RedactWorkflow,
    ReviewWorkflow,
    RejectedDocument,
    QuarantinedDocument,
]
VERSIONED_WORKFLOWS: list[type] = [
    PinnedDocumentWorkflow,
    UpgradingReleaseWorkflow,
    PinnedPreviewWorkflow,
    PinnedRedactWorkflow,
    UpgradingReviewWorkflow,
    PinnedRejectedDocument,
    PinnedQuarantinedDocument,
]
