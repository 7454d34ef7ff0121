"""A person's signed decision as an activity takes it: parsed, its signer checked, or refused.

The review step (``activities.review``) and the two-person approval
(``activities.approval``) both act on a decision a person signed elsewhere. Each
checks the decision's subject against what it is asked to do; the parsing, the
signer's standing (``custody.operators.check_decision``) and the shape of a
refusal are the same for both, so they live here. A refusal is final
(non-retryable, its code kept): a retry cannot make a decision valid, and the
update that asked for it fails with the document or release left as it was.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.exceptions import ApplicationError

from custody.errors import Code, IdentityRefused
from custody.operators import Identity, SignedDecision, check_decision
from custody.stores import ObjectStore

__all__ = ["decider", "parse", "refused"]


def refused(code: Code | str, message: str) -> ApplicationError:
    """A decision that cannot take effect: final, with its code as the failure's type."""
    return ApplicationError(message, type=str(code), non_retryable=True)


def parse(raw: str) -> SignedDecision:
    """The signed decision in ``raw``, or DECISION_INVALID."""
    try:
        return SignedDecision.model_validate_json(raw)
    except ValueError:
        raise refused(Code.DECISION_INVALID, "not a signed decision") from None


def decider(store: ObjectStore, decision: SignedDecision) -> Identity:
    """The registered identity that signed ``decision`` and may act now, or its refusal."""
    try:
        return check_decision(store, decision, now=datetime.now(UTC))
    except IdentityRefused as err:
        raise refused(err.code, err.detail) from None
