"""The release activities on their own: Temporal's ``ActivityEnvironment``, a real local
store, ledger, signer, renderer and outbox, and one document the real pipeline published
for the session (with one it rejected), copied for the module.

What the workflow's branch tests stand in for: each activity's refusals, the policy read
by its pinned hash, the nested v1 inputs a release started before the step models still
sends, and that each step run again (as after a worker died in it) finds what the first
run left instead of doing it twice.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.release import ReleaseActivities
from activities.scratch import StagingArea
from custody import egress as eg
from custody import ids
from custody import release_steps as steps
from custody import release_steps_v1 as v1
from custody.ledger.events import Ledger
from custody.ledger.signing import signer_from_settings
from custody.models import SignedRecord
from custody.settings import Settings
from custody.state.egress import add_policy, add_recipient, revoke_recipient
from custody.stores.local import LocalStore
from tests.helpers import recipient
from tests.published import Published as Shared
from tests.published import copy_published


@dataclass(frozen=True)
class Published:
    settings: Settings
    tenant: str
    sha256: str
    rejected: str


@pytest.fixture(scope="module")
def published(published_once: Shared, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """A copy of the session's published store: its phototest scan and its rejected file."""
    p = copy_published(published_once, tmp_path_factory.mktemp("release-acts"))
    return Published(p.settings, p.tenant, p.sha256, p.rejected)


@dataclass
class Desk:
    """The module's published store (or a copy of it) and the activities over it."""

    p: Published
    store: LocalStore
    outbox: Path

    @property
    def acts(self) -> ReleaseActivities:
        s = self.p.settings
        area = StagingArea(s.staging_path)
        return ReleaseActivities(self.store, area, signer_from_settings(s), s)

    def run(self, method: Any, arg: Any, attempt: int = 1) -> Any:
        env = ActivityEnvironment()
        env.info = dataclasses.replace(env.info, workflow_id="release-test", attempt=attempt)
        return env.run(method, arg)

    def refusal(self, method: Any, arg: Any) -> str | None:
        """The code the activity fails with; it must be final."""
        with pytest.raises(ApplicationError) as info:
            self.run(method, arg)
        assert info.value.non_retryable
        return info.value.type

    def release(self, to: str = "", documents: list[str] | None = None) -> eg.ReleaseInput:
        """A release of the published document to an outbox recipient of its own."""
        to = to or f"clinic-{os.urandom(4).hex()}"
        add_recipient(self.store, recipient(self.p.tenant, to, self.outbox / to))
        return eg.ReleaseInput(
            release_id=os.urandom(16).hex(),
            tenant=self.p.tenant,
            recipient=to,
            policy_sha256=eg.DEFAULT_POLICY.sha256(),
            documents=[self.p.sha256] if documents is None else documents,
            actor="op:test",
            requested_at=datetime.now(UTC),
        )


@pytest.fixture
def desk(published: Published, tmp_path: Path) -> Desk:
    return Desk(published, LocalStore(published.settings.objects_dir), tmp_path / "outboxes")


@pytest.fixture
def copied(published: Published, tmp_path: Path) -> Desk:
    """The published store copied, for a test that alters it."""
    objects = tmp_path / "objects"
    shutil.copytree(published.settings.objects_dir, objects)
    return Desk(published, LocalStore(objects), tmp_path / "outboxes")


def _prepare(desk: Desk, inp: eg.ReleaseInput) -> steps.PrepareInput:
    return steps.Inputs(inp).prepare()


@pytest.mark.parametrize(
    ("case", "code"),
    [("rejected", "NOT_PUBLISHED"), ("unknown", "DOCUMENT_UNKNOWN"), ("none", "RELEASE_INVALID")],
)
def test_prepare_refuses_what_is_not_published_here(desk: Desk, case: str, code: str) -> None:
    """A rejected, unknown or missing document is refused; nothing is written."""
    docs = {"rejected": [desk.p.rejected], "unknown": ["ab" * 32], "none": []}[case]
    before = len(list(Ledger(desk.store, desk.p.tenant).events()))
    assert desk.refusal(desk.acts.prepare, _prepare(desk, desk.release(documents=docs))) == code
    assert len(list(Ledger(desk.store, desk.p.tenant).events())) == before


def test_prepare_refuses_another_tenants_document(desk: Desk) -> None:
    """The same document asked for under another tenant is unknown there."""
    inp = desk.release().model_copy(update={"tenant": "someone-else"})
    add_recipient(desk.store, recipient("someone-else", inp.recipient, desk.outbox))
    assert desk.refusal(desk.acts.prepare, _prepare(desk, inp)) == "DOCUMENT_UNKNOWN"


def test_prepare_refuses_unknown_or_revoked_recipients_and_unknown_policies(desk: Desk) -> None:
    """Who and under what are checked again when the release runs, not only at its start."""
    gone = _prepare(desk, desk.release())
    assert revoke_recipient(desk.store, desk.p.tenant, gone.recipient, by="op")
    assert desk.refusal(desk.acts.prepare, gone) == "RECIPIENT_REVOKED"
    nobody = gone.model_copy(update={"recipient": "nobody"})
    assert desk.refusal(desk.acts.prepare, nobody) == "RECIPIENT_UNKNOWN"
    unknown = _prepare(desk, desk.release()).model_copy(update={"policy_sha256": "0" * 64})
    assert desk.refusal(desk.acts.prepare, unknown) == "POLICY_UNKNOWN"
    reads = unknown.model_copy(update={"policy_sha256": eg.READ_POLICY.sha256()})
    assert desk.refusal(desk.acts.prepare, reads) == "POLICY_INVALID"


def test_prepare_refuses_a_source_that_no_longer_hashes(copied: Desk) -> None:
    """A stored source altered after publication is SOURCE_ALTERED: nothing is released."""
    inp = _prepare(copied, copied.release())
    source = copied.run(copied.acts.prepare, inp).sources[0].source_key
    copied.store.put(source, b"altered")
    assert copied.refusal(copied.acts.prepare, inp) == "SOURCE_ALTERED"


def test_prepare_reads_each_source_as_its_signed_record_names_it(desk: Desk) -> None:
    """The source a release renders carries the record's own keys, page count and hash."""
    source = desk.run(desk.acts.prepare, _prepare(desk, desk.release())).sources[0]
    key = ids.record_key(desk.p.sha256, desk.p.tenant)
    record = SignedRecord.model_validate_json(desk.store.get(key)).record
    assert source.model_dump() == {
        "sha256": desk.p.sha256,
        "source_key": record.source_key,
        "media_type": record.media_type,
        "pages": record.pages,
        "pages_key": record.pages_key,
        "text_key": record.text_key,
    }


def test_prepare_reads_the_policy_pinned_at_start_and_render_follows_it(desk: Desk) -> None:
    """Pinned by hash: a newer version of the policy does not change what is rendered."""
    first = eg.Policy(name="text-only", include=("text",), c2pa=False)
    add_policy(desk.store, desk.p.tenant, first)
    add_policy(desk.store, desk.p.tenant, eg.Policy(name="text-only", include=("searchable_pdf",)))
    inp = desk.release().model_copy(update={"policy_sha256": first.sha256()})
    prepared = desk.run(desk.acts.prepare, _prepare(desk, inp))
    assert prepared.policy == first and prepared.attempt == 1
    rendered = desk.run(desk.acts.render, steps.Inputs(inp).render(prepared))
    assert [f.media_type for f in rendered.files] == ["text/plain"]
    assert rendered.manifest_sha256s == {}


def _held(desk: Desk, rule: str) -> bool:
    """Whether prepare holds a release of the published scan under a ``rule`` policy."""
    policy = eg.Policy(name=f"held-{rule}", two_person=rule)  # type: ignore[arg-type]
    add_policy(desk.store, desk.p.tenant, policy)
    inp = desk.release().model_copy(update={"policy_sha256": policy.sha256()})
    prepared: steps.Prepared = desk.run(desk.acts.prepare, _prepare(desk, inp))
    return prepared.needs_approval


def test_prepare_holds_for_a_second_person_as_the_policy_and_the_record_say(
    copied: Desk,
) -> None:
    """always: held; none: not; flagged: only once the record names a field to review."""
    key = ids.record_key(copied.p.sha256, copied.p.tenant)
    signed = SignedRecord.model_validate_json(copied.store.get(key))
    assert signed.record.fields_review == [] and signed.record.confidence_band != "review"
    assert [_held(copied, rule) for rule in ("always", "none", "flagged")] == [True, False, False]
    record = signed.record.model_copy(update={"fields_review": ["participant_id"]})
    copied.store.put(key, signed.model_copy(update={"record": record}).model_dump_json().encode())
    assert _held(copied, "flagged") is True


def test_each_step_takes_its_v1_input_and_answers_as_for_todays(desk: Desk) -> None:
    """The nested inputs of a release started before the step models: the same results."""
    inp = desk.release()
    now, then = steps.Inputs(inp), v1.Inputs(inp)
    prepared = desk.run(desk.acts.prepare, then.prepare())
    assert prepared == desk.run(desk.acts.prepare, now.prepare())
    rendered = desk.run(desk.acts.render, then.render(prepared))
    assert rendered == desk.run(desk.acts.render, now.render(prepared))
    recorded = desk.run(desk.acts.record, then.record(prepared, rendered))
    assert recorded == desk.run(desk.acts.record, now.record(prepared, rendered))
    made = steps.Made(prepared, rendered, recorded)
    delivered = desk.run(desk.acts.deliver, then.deliver(made))
    assert delivered.already_delivered is False
    again = desk.run(desk.acts.deliver, now.deliver(made))
    assert again.already_delivered and again.answer_sha256 == delivered.answer_sha256
    receipt = desk.run(desk.acts.receipt, then.receipt(made, delivered))
    assert receipt == desk.run(desk.acts.receipt, now.receipt(made, delivered))
    closed = desk.run(desk.acts.close, then.close(made, "RECIPIENT_UNREACHABLE"))
    assert closed == desk.run(desk.acts.close, now.close(made, "RECIPIENT_UNREACHABLE"))


def test_each_step_run_again_finds_what_the_first_run_left(desk: Desk) -> None:
    """As after a worker killed mid-release: each file made once, the packet delivered once,
    one egress event, one receipt and one closing event, each step on a later attempt."""
    inp = desk.release()
    shapes = steps.Inputs(inp)
    prepared = desk.run(desk.acts.prepare, shapes.prepare())
    rendered = desk.run(desk.acts.render, shapes.render(prepared))
    assert desk.run(desk.acts.render, shapes.render(prepared), attempt=2).files == rendered.files
    recorded = desk.run(desk.acts.record, shapes.record(prepared, rendered))
    again = desk.run(desk.acts.record, shapes.record(prepared, rendered), attempt=2)
    assert (again.event_seq, again.attempt) == (recorded.event_seq, 2)
    made = steps.Made(prepared, rendered, recorded)
    first = desk.run(desk.acts.deliver, shapes.deliver(made))
    second = desk.run(desk.acts.deliver, shapes.deliver(made), attempt=2)
    assert (first.already_delivered, second.already_delivered, second.attempts) == (False, True, 2)
    rid = inp.release_id
    copies = sorted(p.name for p in (desk.outbox / inp.recipient / rid).iterdir())
    assert copies == sorted([rendered.files[0].name, "manifest.json"])
    receipt = desk.run(desk.acts.receipt, shapes.receipt(made, first))
    assert desk.run(desk.acts.receipt, shapes.receipt(made, second), attempt=2).key == receipt.key
    desk.run(desk.acts.close, shapes.close(made, "RECIPIENT_UNREACHABLE"))
    desk.run(desk.acts.close, shapes.close(made, "RECIPIENT_UNREACHABLE"), attempt=2)
    kinds = [
        e.kind
        for e in Ledger(desk.store, desk.p.tenant).events()
        if e.detail.get("release_id") == rid
    ]
    assert kinds == [eg.EGRESS_EVENT, eg.RECEIPT_EVENT, eg.FAILED_EVENT]


def test_deliver_refuses_a_stored_file_that_changed(copied: Desk) -> None:
    """A released file altered after the egress event is not sent: SOURCE_ALTERED."""
    inp = copied.release()
    shapes = steps.Inputs(inp)
    prepared = copied.run(copied.acts.prepare, shapes.prepare())
    rendered = copied.run(copied.acts.render, shapes.render(prepared))
    recorded = copied.run(copied.acts.record, shapes.record(prepared, rendered))
    name = rendered.files[0].name
    copied.store.put(eg.release_file_key(inp.tenant, inp.release_id, name), b"other bytes")
    deliver = shapes.deliver(steps.Made(prepared, rendered, recorded))
    assert copied.refusal(copied.acts.deliver, deliver) == "SOURCE_ALTERED"
    assert not (copied.outbox / inp.recipient).exists()
