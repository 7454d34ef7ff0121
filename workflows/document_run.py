"""What a document's run keeps of itself, for both runs a document goes through.

A document's first run (``DocumentWorkflow``) and the run it continues as when a
person must look (``ReviewWorkflow``) keep the same things: its state and code,
the attempts each step took, its transitions and page count. Both answer the
same ``status`` query, end with the same ``DocumentResult``, show their state the
same way in the UI and build the publish and conclude inputs from the same
results, so that code lives here once and the two cannot drift apart.

Deterministic code only: it reads ``workflow.now()`` and ``workflow.info()``, and
issues one command (the search attribute upsert in ``_show``), in the place the
workflow calls it.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from custody.errors import Code
    from custody.models import (
        CheckResult,
        ConcludeInput,
        DocState,
        DocumentInput,
        DocumentResult,
        DocumentStatus,
        OcrResult,
        PublishInput,
        PublishResult,
        StageResult,
        Transition,
        ValidationResult,
        fields_among,
    )
    from custody.queues import REASON_KEY, STATE_KEY
    from custody.reviews import QUARANTINED_WORKFLOW_NAME, REJECTED_WORKFLOW_NAME

#: The run type a concluded document continues as (workflows.outcomes), by its state.
OUTCOME_TYPES = {
    DocState.REJECTED: REJECTED_WORKFLOW_NAME,
    DocState.QUARANTINED: QUARANTINED_WORKFLOW_NAME,
}


class DocumentRun:
    """State, code, attempts, transitions and pages of one document's run."""

    def __init__(self, state: DocState) -> None:
        self._doc: DocumentInput | None = None
        self._state = state
        self._code: str | None = None
        self._pages = 0
        self._transitions: list[Transition] = []
        self._attempts: dict[str, int] = {}

    @property
    def _document(self) -> DocumentInput:
        if self._doc is None:  # only reachable if run() was bypassed
            raise ApplicationError("workflow input missing", type=Code.INTERNAL.value)
        return self._doc

    @workflow.query
    def status(self) -> DocumentStatus:
        doc = self._doc
        return DocumentStatus(
            sha256=doc.sha256 if doc else "",
            tenant=doc.tenant if doc else None,
            state=self._state,
            code=self._code,
            attempts=dict(self._attempts),
            pages=self._pages,
            transitions=list(self._transitions),
        )

    def _transition(self, state: DocState, by: str | None = None) -> Transition:
        return Transition(state=state, at=workflow.now(), by=by)

    def _enter(self, state: DocState, by: str | None = None) -> None:
        """``by``: the worker whose step led here, or the person who decided."""
        self._state = state
        self._transitions.append(self._transition(state, by))
        self._show(self._code)

    def _show(self, reason: str | None) -> None:
        """State and reason as search attributes; in the UI beside the run: codes and counts."""
        workflow.upsert_search_attributes(
            [STATE_KEY.value_set(self._state.value), REASON_KEY.value_set(reason or "")]
        )
        detail = f"state={self._state.value} pages={self._pages}"
        workflow.set_current_details(detail + (f" code={reason}" if reason else ""))

    def _own(self) -> dict[str, object]:
        """What this run states of itself in each model it builds: its state and code, the
        attempts, pages and transitions so far, and its ids."""
        info = workflow.info()
        return {
            "state": self._state,
            "code": self._code,
            "attempts": dict(self._attempts),
            "pages": self._pages,
            "transitions": list(self._transitions),
            "workflow_id": info.workflow_id,
            "run_id": info.run_id,
        }

    def _result(self, doc: DocumentInput, *steps: PublishResult, **given: object) -> DocumentResult:
        """The run's result: the document, the run itself, what a published step gives by
        name (its record and text keys) and what is ``given`` (a conclusion's record key,
        the check's mean confidence)."""
        return DocumentResult(**fields_among(DocumentResult, doc, self._own(), *steps, **given))

    def _publish_input(
        self,
        doc: DocumentInput,
        staged: StageResult,
        valid: ValidationResult,
        ocr: OcrResult,
        check: CheckResult,
        by: str | None = None,
    ) -> PublishInput:
        """The record states its own publication (``by``: the reviewer); the rest is history.

        The size is the staged source's; the capture time the submitter's, else the submission's.
        """
        published = [*self._transitions, self._transition(DocState.PUBLISHED, by)]
        return PublishInput(
            **fields_among(
                PublishInput,
                doc,
                staged,
                valid,
                self._own(),
                ocr=ocr,
                check=check,
                transitions=published,
                size_bytes=staged.size_bytes,
                captured_at=doc.captured_at or doc.submitted_at,
            )
        )

    def _conclude_input(
        self,
        doc: DocumentInput,
        code: str,
        kept_key: str | None,
        document_type: str | None = None,
    ) -> ConcludeInput:
        """The outcome just entered, with its code, recorded beside the kept source."""
        found = {"code": code, "source_key": kept_key, "document_type": document_type}
        return ConcludeInput(**fields_among(ConcludeInput, doc, self._own(), **found))
