"""The two-person rule on evidence deletions: a request by one identity, done by a second.

A tenant policy (the policy named ``tenant``) with ``two_person`` on: ``custody keys
shred`` and ``custody retention approve`` file a signed deletion request and delete
nothing; ``custody deletions approve`` by the requester (``SAME_APPROVER``), a revoked
or an expired identity is refused and changes nothing; a second, different admin's
approval carries the shred out at once, and lets ``retention apply`` delete a document
whose period has run out (the clock is the one thing moved), the deletion event naming
both people. Shreds run in this process on a development keyring; the retention
document is published by the real pipeline on the dev server.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custody import egress as eg
from custody import ids
from custody import operators as ops
from custody.errors import Code
from custody.keys import keyring as keys
from custody.ledger.checkpoints import notary_from_settings
from custody.ledger.events import Ledger, notarize
from custody.ledger.signing import public_keys, signer_from_settings
from custody.operators import Role
from custody.settings import Settings
from custody.state.egress import add_policy
from custody.state.tenant_policy import TENANT_POLICY
from custody.stores import open_raw_store, open_store
from starter.cli.output import Exit
from starter.evidence.retention import DELETED, evidence_keys, policies
from starter.evidence.retention_apply import Retention
from starter.evidence.trust import TrustAnchors
from tests.helpers import Rig, cli, custody_cli, publish_scan
from tests.identities import as_person

HELD = eg.Policy(name=TENANT_POLICY, two_person="always")


def _shredded(settings: Settings, tenant: str) -> bool:
    return keys.require_keyring(settings).scopes().get(tenant) == "shredded"


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Settings]:
    """Admins alice and carol, a revoked admin bob, an expired admin erin; a held tenant."""
    keys.init_keyring(tmp_path / "keys", development=True)
    base = Settings(home=tmp_path)
    found = {n: as_person(base, n, Role.ADMIN) for n in ("alice", "bob", "carol")}
    found["erin"] = as_person(base, "erin", Role.ADMIN, days=1e-6)
    ops.revoke(open_store(base), "bob", by="root")
    add_policy(open_store(base), "clinic-a", HELD)
    time.sleep(0.2)  # erin's validity (a tenth of a second) has run out
    return found


def test_deletion_shred_waits_for_a_second_different_identity(people: dict[str, Settings]) -> None:
    """Filed by alice, nothing destroyed; alice, revoked bob, expired erin refused; carol's
    approval shreds it, the record names both; a second approval is ALREADY_DECIDED."""
    alice = people["alice"]
    rc, filed = cli(alice, "keys", "shred", "clinic-a", "--confirm", "clinic-a")
    assert (rc, filed["state"], filed["requested_by"]) == (0, "awaiting_approval", "alice")
    assert not _shredded(alice, "clinic-a")
    rid = filed["request_id"]
    for name, code in (("alice", Code.SAME_APPROVER), ("bob", Code.OPERATOR_REVOKED),
                       ("erin", Code.OPERATOR_EXPIRED)):  # fmt: skip
        rc, refused = cli(people[name], "deletions", "approve", rid)
        assert (rc, refused["error"]) == (Exit.DENIED, code), name
    assert not _shredded(alice, "clinic-a")
    rc, listed = cli(alice, "deletions", "ls", tenant="clinic-a")
    assert rc == 0 and [(r["request_id"], r["approved_by"]) for r in listed] == [(rid, None)]
    rc, done = cli(people["carol"], "deletions", "approve", rid)
    assert rc == 0, done
    assert (done["state"], done["requested_by"], done["approved_by"]) == (
        "deleted",
        "alice",
        "carol",
    )
    assert _shredded(alice, "clinic-a")
    record = json.loads(open_raw_store(alice).get("shred/clinic-a.json"))["record"]
    assert (record["by"], record["approved_by"]) == ("alice", "carol")
    rc, again = cli(people["carol"], "deletions", "approve", rid)
    assert (rc, again["error"]) == (Exit.DENIED, Code.ALREADY_DECIDED)
    rc, unknown = cli(people["carol"], "deletions", "approve", "0" * 16)
    assert (rc, unknown["error"]) == (Exit.DENIED, Code.APPROVAL_NOT_PENDING)


def test_deletion_shred_without_the_rule_is_one_persons(people: dict[str, Settings]) -> None:
    """A tenant with no tenant policy: alice's shred is carried out at once, as before."""
    rc, done = cli(people["alice"], "keys", "shred", "clinic-b", "--confirm", "clinic-b")
    assert rc == 0 and done["by"] == "alice" and "approved_by" not in done
    assert _shredded(people["alice"], "clinic-b")


async def test_deletion_retention_deletes_only_after_a_second_approval(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Due, but awaiting approval: nothing deleted; the owner approving again is refused;
    after a second admin's approval, apply deletes and the event names them."""
    tenant = rig.tenant
    monkeypatch.setenv("CUSTODY_WITNESS_DIR", str(rig.home / "witness"))
    settings = rig.settings()
    async with rig.pipeline(settings) as custody:
        sha = await publish_scan(custody, rig.corpus, tenant)
    store = custody.store
    add_policy(store, tenant, HELD)
    owner = as_person(settings, "owner", Role.ADMIN, store=store)
    second = as_person(settings, "second", Role.ADMIN, store=store)
    rc, approved = await custody_cli(owner, "retention", "approve", sha, "--policy", "evidence",
                                     tenant=tenant)  # fmt: skip
    assert (rc, approved["state"]) == (0, "awaiting_approval"), approved
    rid = approved["request_id"]
    doomed = evidence_keys(store, sha, tenant)
    assert ids.record_key(sha, tenant) in doomed
    notarize(store, notary_from_settings(settings))
    trusted = TrustAnchors.from_settings(settings).trusted(public_keys(store))
    later = Retention(store, policies(settings), trusted, signer_from_settings(settings),
                      datetime.now(UTC) + timedelta(days=2558))  # fmt: skip
    [held] = later.apply(tenant)
    assert (held.state, held.request_id, held.second_approver) == ("awaiting_approval", rid, None)
    assert all(store.exists(k) for k in doomed)
    rc, same = await custody_cli(owner, "deletions", "approve", rid)
    assert (rc, same["error"]) == (Exit.DENIED, Code.SAME_APPROVER)
    rc, ok = await custody_cli(second, "deletions", "approve", rid)
    assert (rc, ok["state"], ok["approved_by"]) == (0, "approved", "second"), ok
    assert all(store.exists(k) for k in doomed)  # approved, and still only at apply
    [gone] = later.apply(tenant)
    assert (gone.state, gone.second_approver) == ("deleted", "second")
    assert not any(store.exists(k) for k in doomed)
    [event] = [e for e in Ledger(store, tenant).for_document(sha) if e.kind == DELETED]
    assert (event.actor, event.detail["second_approver"]) == ("owner", "second")
    kinds = [e.kind for e in Ledger(store, tenant).for_document(sha)]
    assert kinds.count("deletion.requested") == kinds.count("deletion.approved") == 1
    rc, audit = await custody_cli(settings, "audit", "verify", tenant=tenant)
    assert rc == 0 and audit["ok"], audit


def test_deletion_request_rewritten_to_another_tenant_is_refused(
    people: dict[str, Settings],
) -> None:
    """A request put back naming another tenant than its signed decision (a stand-in for an
    insider's edit): DECISION_INVALID, and neither tenant is shredded."""
    alice = people["alice"]
    rc, filed = cli(alice, "keys", "shred", "clinic-a", "--confirm", "clinic-a")
    assert rc == 0 and filed["state"] == "awaiting_approval"
    store, key = open_store(alice), f"deletions/_/{filed['request_id']}/request.json"
    body = json.loads(store.get(key)) | {"tenant": "clinic-z"}
    store.delete(key)
    store.create(key, json.dumps(body).encode())
    rc, refused = cli(people["carol"], "deletions", "approve", filed["request_id"])
    assert (rc, refused["error"]) == (Exit.DENIED, Code.DECISION_INVALID)
    assert not _shredded(alice, "clinic-a") and not _shredded(alice, "clinic-z")
