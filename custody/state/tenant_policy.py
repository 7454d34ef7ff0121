"""A tenant's own policy: what holds when no request and no release policy says.

A tenant stores it as any other policy, under the reserved name ``tenant``
(``custody policies add tenant --file F --tenant T``; ``custody.egress.Policy``):

- ``purpose``: the purpose of disclosure of the tenant's read, review and export
  events (``custody.state.egress.hand_out``) when the request names none, as a
  release's policy gives its releases theirs;
- ``two_person`` other than ``none``: every deletion of the tenant's evidence
  (retention, crypto-shredding) waits for a second, different identity
  (``starter.evidence.deletions``), as releases under such a policy do.

The newest version counts. No tenant policy: no default purpose, one person deletes.
Reads only the policy's own folder, so it imports nothing of the egress state module.
"""

from __future__ import annotations

from custody import egress as eg
from custody.stores import ObjectStore

#: The reserved policy name.
TENANT_POLICY = "tenant"


def tenant_policy(store: ObjectStore, tenant: str | None) -> eg.Policy | None:
    """The newest version of the tenant's own policy; None when it has none."""
    versions = sorted(store.list(eg.policy_prefix(tenant, TENANT_POLICY)))
    if not versions:
        return None
    return eg.Policy.model_validate_json(store.get(versions[-1]))


def default_purpose(store: ObjectStore, tenant: str | None) -> str | None:
    """The purpose a disclosure of the tenant's is recorded with when the request has none."""
    policy = tenant_policy(store, tenant)
    return None if policy is None else policy.purpose


def deletions_need_two(store: ObjectStore, tenant: str | None) -> bool:
    """Whether deleting the tenant's evidence needs a second, different identity."""
    policy = tenant_policy(store, tenant)
    return policy is not None and policy.two_person != "none"
