"""The runs a concluded document continues as: a type the Temporal UI's list shows.

In a fresh browser the UI's list shows each run's status, type and id, and
nothing else: every document workflow read *Completed*, rejected and
quarantined ones included. So once the outcome is recorded (the ``conclude``
step, evidence and ledger event written), the document workflow continues as
a run of type ``DocumentRejected`` or ``DocumentQuarantined`` under the same
workflow id, which completes at once with the same result. The list then
shows the document's newest run by what became of it, without a column
added; ``wait()`` and ``handle.result()`` follow the continued run and return
the same ``DocumentResult``.

Why a type rather than a run status of its own: the only other status a run
can end with on purpose is *Failed*, which says "something broke" of a
document that was refused by design, would turn every rejection into an
exception for callers, and reads the same as a real failure.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from custody.models import DocState, DocumentResult, DocumentStatus
    from custody.reviews import QUARANTINED_WORKFLOW_NAME, REJECTED_WORKFLOW_NAME


class _Concluded:
    """A run that only states its document's outcome (its input) and its status."""

    def __init__(self) -> None:
        self._result: DocumentResult | None = None

    async def _conclude(self, result: DocumentResult) -> DocumentResult:
        self._result = result
        return result

    @workflow.query
    def status(self) -> DocumentStatus:
        r = self._result
        if r is None:  # queried before the first task ran: nothing to say yet
            return DocumentStatus(sha256="", tenant=None, state=DocState.ACCEPTED)
        return DocumentStatus.of(r)


@workflow.defn(name=REJECTED_WORKFLOW_NAME)
class RejectedDocument(_Concluded):
    @workflow.run
    async def run(self, result: DocumentResult) -> DocumentResult:
        return await self._conclude(result)


@workflow.defn(name=QUARANTINED_WORKFLOW_NAME)
class QuarantinedDocument(_Concluded):
    @workflow.run
    async def run(self, result: DocumentResult) -> DocumentResult:
        return await self._conclude(result)
