"""The two-person rule on the real release workflow and dev server: a held release goes on
only once a second, different, valid identity with the ``releaser`` role approves it.

The release's own steps are stand-ins (tests/workflows/release_stand_ins.py: prepare says
the policy holds it); the approval step is the real one (activities.approval) on a real
local store with real identities and key files (tests/identities.py), so every refusal
below is the registry's and the signature check's, not a script's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from uuid import uuid4

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities.approval import ApprovalActivities
from custody import egress as eg
from custody import operators as ops
from custody.errors import Code, IdentityRefused
from custody.ledger.events import Ledger
from custody.operators import Role
from custody.release_approval import APPROVED_EVENT
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.client.connect import CustodyClient
from starter.client.release import approve
from tests.helpers import custody_cli, make_settings
from tests.identities import as_person
from tests.workflows.release_stand_ins import (
    ReleaseStandIns,
    Script,
    markers,
    release_input,
    start_release,
)
from tests.workflows.test_replay import replay_and_keep
from workflows.release import APPROVAL_PATCH, FAIRNESS_PATCH, STEP_MODELS_PATCH, ReleaseWorkflow


@dataclass
class Office:
    """A worker with the real approval step, its store, and the people who act."""

    client: Client
    stand_ins: ReleaseStandIns
    queue: str
    custody: CustodyClient
    settings: Settings

    def person(self, name: str, *roles: Role, days: float = 30.0) -> ops.Acting:
        """``name``'s credential, unchecked: the workflow's approval step must refuse it."""
        who = as_person(self.settings, name, *roles, store=self.custody.store, days=days)
        assert who.operator_credential is not None
        identity = ops.get(self.custody.store, name)
        assert identity is not None
        key = ops.load_credential(who.operator_credential)
        return ops.Acting(name=key.name, private=key.private, identity=identity)

    async def held(
        self, script: Script, approval_s: float = 120.0, by: str = "alice"
    ) -> WorkflowHandle[ReleaseWorkflow, eg.ReleaseResult]:
        """A release requested by ``by``, once it waits for its second person."""
        inp = release_input().model_copy(update={"actor": by, "approval_s": approval_s})
        handle = await start_release(self.client, self.stand_ins, self.queue, script, inp)
        for _ in range(400):
            if await handle.query(ReleaseWorkflow.state) == "awaiting_approval":
                return handle
            await asyncio.sleep(0.05)
        raise AssertionError("the release never waited for approval")

    async def approve(self, person: ops.Acting, handle: WorkflowHandle[object, object]) -> str:
        """The approval's code: "" when it took effect."""
        rid = handle.id.removeprefix("release-")
        try:
            await approve(self.custody, person, rid, "trelease")
        except IdentityRefused as err:
            return str(err.code)
        return ""


@pytest.fixture(scope="module")
async def office(
    temporal_client: Client, temporal_address: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Office]:
    home = tmp_path_factory.mktemp("approvals")
    settings = make_settings(home, temporal_address)
    store = LocalStore(settings.objects_dir)
    custody = CustodyClient(temporal=temporal_client, store=store, settings=settings)
    stand_ins, queue = ReleaseStandIns(), f"approvals-{uuid4().hex[:10]}"
    acts = [*stand_ins.activities(), ApprovalActivities(store).accept]
    with ThreadPoolExecutor(4) as pool:
        async with Worker(
            temporal_client,
            task_queue=queue,
            workflows=[ReleaseWorkflow],
            activities=acts,
            activity_executor=pool,
        ):
            yield Office(temporal_client, stand_ins, queue, custody, settings)


def _steps(script: Script) -> list[str]:
    return [step for step, _ in script.calls]


async def test_release_held_until_a_second_identity_approves(office: Office) -> None:
    """Nothing rendered or delivered while held; the requester approving is SAME_APPROVER;
    a second releaser's approval lets it go on, once, and is kept in the ledger."""
    script = Script(needs_approval=True)
    handle = await office.held(script)
    alice = office.person("alice", Role.RELEASER)
    bob = office.person("bob", Role.RELEASER)
    await asyncio.sleep(0.5)  # a held release does nothing more meanwhile
    assert _steps(script) == ["prepare"]
    assert await office.approve(alice, handle) == Code.SAME_APPROVER
    assert await office.approve(bob, handle) == ""
    result = await handle.result()
    assert (result.state, result.code) == (eg.ReleaseState.DELIVERED, None)
    assert _steps(script) == ["prepare", "render", "record", "deliver", "receipt"]
    assert result.attempts["approve"] == 1
    assert await office.approve(bob, handle) == Code.APPROVAL_NOT_PENDING  # it ended
    events = [e for e in Ledger(office.custody.store, "trelease").events()]
    approved = [e for e in events if e.kind == APPROVED_EVENT]
    assert [(e.actor, e.detail["requested_by"]) for e in approved] == [("bob", "alice")]
    decision = ops.SignedDecision.model_validate_json(
        office.custody.store.get(str(approved[0].detail["decision"]))
    )
    assert decision.by == "bob" and decision.subject["release_id"] == result.release_id
    assert ops.check_decision(office.custody.store, decision).name == "bob"
    assert await markers(office.client, handle.id) == [
        STEP_MODELS_PATCH,
        FAIRNESS_PATCH,
        APPROVAL_PATCH,
    ]
    await replay_and_keep(office.client, handle.id, "release-approved")


async def test_release_approval_refused_for_revoked_expired_or_roleless(office: Office) -> None:
    """A revoked or expired approver, one without the releaser role: refused with their codes,
    the release still held; nobody valid approving in time ends it refused, nothing rendered."""
    script = Script(needs_approval=True)
    handle = await office.held(script, approval_s=6.0)
    carol = office.person("carol", Role.RELEASER)
    ops.revoke(office.custody.store, "carol", by="root")
    dave = office.person("dave", Role.RELEASER, days=1.0 / 86400)  # expires in a second
    erin = office.person("erin", Role.REVIEWER)
    await asyncio.sleep(1.2)
    assert await office.approve(carol, handle) == Code.OPERATOR_REVOKED
    assert await office.approve(dave, handle) == Code.OPERATOR_EXPIRED
    assert await office.approve(erin, handle) == Code.ROLE_REQUIRED
    assert await handle.query(ReleaseWorkflow.state) == "awaiting_approval"
    result = await handle.result()
    assert (result.state, result.code) == (eg.ReleaseState.REFUSED, Code.APPROVAL_EXPIRED)
    assert _steps(script) == ["prepare"] and result.files == []
    approved = [
        e for e in Ledger(office.custody.store, "trelease").events() if e.kind == APPROVED_EVENT
    ]
    assert all(e.detail["release_id"] != result.release_id for e in approved)


async def test_release_not_held_refuses_an_approval(office: Office) -> None:
    """A release its policy does not hold records no approval marker and takes no approval."""
    script = Script()
    inp = release_input()
    handle = await start_release(office.client, office.stand_ins, office.queue, script, inp)
    result = await handle.result()
    assert result.state is eg.ReleaseState.DELIVERED and "approve" not in result.attempts
    assert APPROVAL_PATCH not in await markers(office.client, handle.id)
    frank = office.person("frank", Role.RELEASER)
    assert await office.approve(frank, handle) == Code.APPROVAL_NOT_PENDING


async def test_release_approve_cli_acts_as_the_credentials_identity(office: Office) -> None:
    """``custody release approve`` as the requester exits 12 SAME_APPROVER; as a second
    releaser 0, naming both people; once the release went on, 12 APPROVAL_NOT_PENDING."""
    script = Script(needs_approval=True)
    handle = await office.held(script, by="gina")
    rid, store = handle.id.removeprefix("release-"), office.custody.store
    gina = as_person(office.settings, "gina", Role.RELEASER, store=store)
    hank = as_person(office.settings, "hank", Role.RELEASER, store=store)
    args = ("release", "approve", rid)
    assert await custody_cli(gina, *args, tenant="trelease") == (
        12,
        {"error": "SAME_APPROVER", "message": "a second person must approve"},
    )
    code, body = await custody_cli(hank, *args, tenant="trelease")
    assert (code, body) == (0, {"release_id": rid, "state": "running"} | body)
    assert (body["requested_by"], body["approved_by"]) == ("gina", "hank")
    assert (await handle.result()).state is eg.ReleaseState.DELIVERED
    code, body = await custody_cli(hank, *args, tenant="trelease")
    assert (code, body["error"]) == (12, "APPROVAL_NOT_PENDING")
