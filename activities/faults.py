"""How an activity's errors become Temporal failures with stable codes.

``coded`` wraps an activity method: a ``CustodyError`` becomes an
``ApplicationError`` whose ``type`` is its code (non-retryable for rejections
and quarantine codes), a store outage becomes ``STORE_UNAVAILABLE``, a full disk
``STAGING_FULL``, and anything unexpected the step's default transient code.
The attempt number travels in ``details`` so the workflow can record
``attempt=3 code=OCR_TIMEOUT``. Messages carry the exception's class and the
code, never ``str(exc)`` of a foreign exception: decoders and OCR libraries can
echo content into their messages.

Fault points: ``CUSTODY_FAULTS="ocr.after_page=kill,publish.before_record=raise"``
turns on documented hooks for the chaos harness. Off unless that variable is set
in the worker's environment. Actions: ``kill`` (SIGKILL this worker), ``raise``
(the step fails with its default transient code), and ``raise@<sha256 prefix>``
(fails only for the document whose SHA-256 starts with that prefix: a poison
document). Besides the points inside activities, every ``coded`` activity has
an entry point ``<step>.start`` (``ocr.start``, ``publish.start`` ...), so
``ocr.start=raise@<sha>`` makes the OCR engine step fail on every attempt for
one chosen document while the rest of the batch runs clean.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import socket
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import structlog
from pydantic import BaseModel
from temporalio import activity
from temporalio.exceptions import ApplicationError, CancelledError

from custody.errors import NON_RETRYABLE_CODES, Code, CustodyError
from custody.stores import ObjectMissing, StoreUnavailable

P = ParamSpec("P")
R = TypeVar("R")

log = structlog.get_logger("custody.activity")


def failure(code: Code | str, message: str = "") -> ApplicationError:
    code = Code(code)
    return ApplicationError(
        message or code.value,
        {"attempt": activity.info().attempt, "code": code.value},
        type=code.value,
        non_retryable=code.value in NON_RETRYABLE_CODES,
    )


def _translate(exc: BaseException, default: Code) -> ApplicationError:
    if isinstance(exc, ApplicationError):
        return exc
    if isinstance(exc, CustodyError):
        return failure(exc.code, exc.detail)
    if isinstance(exc, StoreUnavailable | ObjectMissing):
        return failure(Code.STORE_UNAVAILABLE, f"store: {type(exc).__name__}")
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return failure(Code.STAGING_FULL, "no space left on the staging filesystem")
    return failure(default, f"{default.value}: {type(exc).__name__}")


def coded(default: Code) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Classify whatever the wrapped activity raises (see module docstring)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def inner(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                if os.environ.get("CUSTODY_FAULTS") and activity.in_activity():
                    fault_point(f"{_step()}.start")
                return _stamped(fn(*args, **kwargs))
            except CancelledError:
                raise  # the server gave up on this attempt; nothing to classify
            except Exception as exc:
                raise _translate(exc, default) from None

        return inner

    return wrap


#: This process as Temporal's workers name themselves by default (``pid@host``).
WORKER = f"{os.getpid()}@{socket.gethostname()}"


def _stamped(result: R) -> R:
    """A step result that names its worker (``worker``), so the workflow records the
    owner of the transition it makes; other results as they are."""
    if not isinstance(result, BaseModel) or "worker" not in type(result).model_fields:
        return result
    if getattr(result, "worker", None) is not None:
        return result
    stamped: R = result.model_copy(update={"worker": WORKER})
    return stamped


def fault_point(name: str) -> None:
    """A documented hook for fault injection; a no-op unless configured."""
    spec = os.environ.get("CUSTODY_FAULTS", "")
    if not spec:
        return
    for item in spec.split(","):
        point, _, action = item.partition("=")
        if point.strip() != name:
            continue
        action, _, target = action.strip().partition("@")
        if target and not _document().startswith(target.strip().lower()):
            continue
        log.warning("fault_point", point=name, action=action, targeted=bool(target))
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif action == "raise":
            raise RuntimeError(f"injected fault at {name}")


def _step() -> str:
    """``custody.ocr`` -> ``ocr``: the step name fault points use."""
    return activity.info().activity_type.removeprefix("custody.")


def _document() -> str:
    """The SHA-256 of the document this activity works on (the workflow id's last part)."""
    return (activity.info().workflow_id or "").rpartition("-")[2].lower()
