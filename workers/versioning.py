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

import functools
from typing import Any, Protocol

from temporalio import workflow
from temporalio.common import VersioningBehavior

from workflows.document import DocumentWorkflow
from workflows.outcomes import QuarantinedDocument, RejectedDocument
from workflows.preview import PreviewWorkflow
from workflows.redact import RedactWorkflow
from workflows.release import ReleaseWorkflow
from workflows.review import ReviewWorkflow

# As in the workflow modules: the names are passed through the sandbox.
with workflow.unsafe.imports_passed_through():
    from custody.egress import RELEASE_WORKFLOW_NAME
    from custody.previews import PREVIEW_WORKFLOW_NAME
    from custody.queues import WORKFLOW_NAME
    from custody.redactions import REDACT_WORKFLOW_NAME
    from custody.reviews import (
        QUARANTINED_WORKFLOW_NAME,
        REJECTED_WORKFLOW_NAME,
        REVIEW_WORKFLOW_NAME,
    )


class _Workflow(Protocol):
    async def run(self, arg: Any, /) -> Any: ...


PINNED, AUTO_UPGRADE = VersioningBehavior.PINNED, VersioningBehavior.AUTO_UPGRADE

#: Each workflow type, its registered name and its behaviour on a versioned worker
#: (why each: above). The plain classes, in this order, are what an unversioned one runs.
BEHAVIOURS: dict[type[_Workflow], tuple[str, VersioningBehavior]] = {
    DocumentWorkflow: (WORKFLOW_NAME, PINNED),
    ReleaseWorkflow: (RELEASE_WORKFLOW_NAME, AUTO_UPGRADE),
    PreviewWorkflow: (PREVIEW_WORKFLOW_NAME, PINNED),
    RedactWorkflow: (REDACT_WORKFLOW_NAME, PINNED),
    ReviewWorkflow: (REVIEW_WORKFLOW_NAME, AUTO_UPGRADE),
    RejectedDocument: (REJECTED_WORKFLOW_NAME, PINNED),
    QuarantinedDocument: (QUARANTINED_WORKFLOW_NAME, PINNED),
}


def versioned(base: type[_Workflow], name: str, behaviour: VersioningBehavior) -> type:
    """``base`` on a versioned worker: a subclass under the same name, stating ``behaviour``.

    The SDK wants the run method on the decorated class itself, so the subclass's run
    is ``base``'s (same signature and types) calling it; queries, signals and updates
    are inherited. Its class name (``PinnedDocumentWorkflow``, ``UpgradingReleaseWorkflow``)
    is a name of this module, which the sandbox imports it by.
    """
    class_name = ("Pinned" if behaviour is PINNED else "Upgrading") + base.__name__

    @functools.wraps(base.run)
    async def run(self: Any, *args: Any) -> Any:
        return await base.run(self, *args)

    run.__module__, run.__qualname__ = __name__, f"{class_name}.run"
    members = {"__module__": __name__, "__doc__": base.__doc__, "run": workflow.run(run)}
    cls = type(class_name, (base,), members)
    return workflow.defn(name=name, versioning_behavior=behaviour)(cls)


#: What the I/O worker registers: plain, or each with its versioning behaviour.
WORKFLOWS: list[type] = list(BEHAVIOURS)
VERSIONED_WORKFLOWS: list[type] = [versioned(cls, *how) for cls, how in BEHAVIOURS.items()]
globals().update({cls.__name__: cls for cls in VERSIONED_WORKFLOWS})
