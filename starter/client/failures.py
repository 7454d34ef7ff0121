"""What a workflow the caller side started failed with: its activity's code, or a timeout.

Activities classify their errors (``activities.faults``): an ``ApplicationError``
whose type is a stable code and whose message names hashes, sizes and limits,
never content. A caller waiting on a short workflow (a preview, a redacted
view) answers with that code; a server-side timeout gets the caller's own.
"""

from __future__ import annotations

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.exceptions import TimeoutError as ServerTimeout

from custody.errors import Code

__all__ = ["failure_of"]


def failure_of(err: WorkflowFailureError, *, timeout: Code, default: Code) -> tuple[Code, str]:
    """The code and message the workflow failed with: the activity's, ``timeout`` when the
    server gave up on an attempt, else ``default``."""
    cause: BaseException | None = err.cause
    while cause is not None and not isinstance(cause, ApplicationError | ServerTimeout):
        cause = cause.__cause__
    if isinstance(cause, ServerTimeout):
        return timeout, "no answer within the step's deadline"
    if isinstance(cause, ApplicationError) and (cause.type or "") in Code.__members__:
        return Code(cause.type or ""), cause.message
    return default, default.value
