"""Named identities: who decides, with a key of their own (issue #31).

registry     identities (name, roles, public key, expiry, revocation) as signed state versions
credentials  what a person keeps: their private key in a key file; the acting identity
decisions    a decision signed by the acting identity's own key, and its check

A decision (a review, a quarantine release or rejection, a release or
redaction approval, a retention approval or deletion, a key rotation or
shredding) is made by the identity whose key file ``CUSTODY_OPERATOR_CREDENTIAL``
names, never by a default, and is signed by that identity's key: the record
names a person, and no one holding only the system key can forge one.
"""

from custody.operators.credentials import (
    Acting,
    acting,
    check_acting,
    issue,
    load_credential,
    parse_credential,
)
from custody.operators.decisions import DecisionKind, SignedDecision, check_decision, role_for
from custody.operators.registry import (
    Identity,
    Role,
    add,
    bootstrap,
    get,
    list_identities,
    revoke,
)

__all__ = [
    "Acting",
    "DecisionKind",
    "Identity",
    "Role",
    "SignedDecision",
    "acting",
    "add",
    "bootstrap",
    "check_acting",
    "check_decision",
    "get",
    "issue",
    "list_identities",
    "load_credential",
    "parse_credential",
    "revoke",
    "role_for",
]
