"""Determinism: the workflow replays histories saved from real runs.

``histories/`` holds histories recorded by this module from real runs on the dev
server (published, rejected, quarantined; ``release-delivered``, recorded by
``test_release.py`` from a real release, and ``release-refused`` and
``release-failed`` by ``test_release_branches.py`` on stand-in activities;
``stalled``, recorded by ``test_overload.py``: a reserved-lane document, priority
and fairness key on every step, quarantined QUEUE_STALLED at its schedule-to-start
bound); ``preview`` and ``redact``, recorded by ``tests/starter/edge/test_preview.py``
and ``tests/starter/cli/test_redact.py``. ``release-*-v1`` are releases recorded
before the step models (patch ``release-step-models``): a release in flight across
that upgrade replays them. ``release-approved``, recorded by ``test_release_approval.py``:
a release a two-person policy held until a second identity approved it (Update ``approve``,
patch ``release-two-person``).
``*-v1`` and ``*-v2`` are kept from earlier versions of the workflow (v2: before
object references were signed), so documents still in flight across an upgrade
keep replaying; the unsuffixed ones are the current shape, recorded with a
keyring, so their references carry signatures (payloads stay plain: the replayer
has no keys).
A change to the workflow that would break running documents fails here. To
record them again after an intended, versioned change (copy the current ones
to a new ``-vN`` first): ``CUSTODY_RECORD_HISTORIES=1 make test
PYTEST_ARGS=tests/workflows/test_replay.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from custody.converter import data_converter
from custody.keys import keyring as keys
from custody.models import DocState
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.client.submit import submit, wait
from tests.helpers import FailingEngine, Rig, make_settings
from workers.versioning import WORKFLOWS

HISTORIES = Path(__file__).parent / "histories"
RECORD = os.environ.get("CUSTODY_RECORD_HISTORIES") == "1"


async def replay_and_keep(client: Client, workflow_id: str, name: str) -> None:
    """Replay a run made now on the current code; with CUSTODY_RECORD_HISTORIES=1, save it."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    replayed = await _replayer().replay_workflow(history)
    assert replayed.replay_failure is None, f"{name}: {replayed.replay_failure}"
    if RECORD:
        HISTORIES.mkdir(exist_ok=True)
        (HISTORIES / f"{name}.json").write_text(json.dumps(history.to_json_dict(), indent=1))


def _replayer() -> Replayer:
    # Every workflow the I/O worker registers: a saved history of any of them must replay.
    return Replayer(workflows=WORKFLOWS, data_converter=data_converter())


async def test_replay_saved_histories_replay_without_nondeterminism() -> None:
    """Every saved history (one per terminal state) replays on the current code."""
    files = sorted(HISTORIES.glob("*.json"))
    assert {f.stem for f in files} >= {"published", "rejected", "quarantined", "stalled"}
    releases = {
        f"release-{state}{v}" for state in ("delivered", "refused", "failed") for v in ("", "-v1")
    }
    assert {f.stem for f in files} >= releases
    assert {f.stem for f in files} >= {"preview", "redact"}
    assert "release-approved" in {f.stem for f in files}  # held for a second person
    for path in files:
        history = WorkflowHistory.from_json(path.stem, path.read_text())
        result = await _replayer().replay_workflow(history)
        assert result.replay_failure is None, f"{path.name}: {result.replay_failure}"


async def test_replay_fresh_histories_of_every_terminal_state(
    rig: Rig,
) -> None:
    """Histories of runs made now, with signed references, replay too; with
    CUSTODY_RECORD_HISTORIES=1 they are saved."""
    scan = rig.scan()
    cases = {
        "published": (rig.engine, scan, DocState.PUBLISHED),
        "rejected": (
            rig.engine,
            (rig.corpus / "bad_inputs" / "zip_renamed.pdf").read_bytes(),
            DocState.REJECTED,
        ),
        "quarantined": (FailingEngine(rig.engine), scan + b"\n", DocState.QUARANTINED),
    }
    for name, (engine, data, expected) in cases.items():
        settings = make_settings(rig.home / name, rig.address)
        ring = keys.init_keyring(rig.home / name / "keys", development=True)
        store = SealedStore(LocalStore(settings.objects_dir), ring)
        async with rig.pipeline(settings, engine, store=store) as custody:
            sub = await submit(custody, data, tenant=rig.tenant)
            res = await wait(custody, sub.sha256, tenant=rig.tenant)
            assert res.state is expected
            # The document run itself, not the outcome run it may continue as.
            run = rig.client.get_workflow_handle(sub.workflow_id, run_id=res.run_id)
            history = await run.fetch_history()
        replayed = await _replayer().replay_workflow(history)
        assert replayed.replay_failure is None
        started = history.events[0].workflow_execution_started_event_attributes
        assert json.loads(started.input.payloads[0].data)["intake_sig"]  # a signed reference
        if RECORD:
            HISTORIES.mkdir(exist_ok=True)
            data_json = json.dumps(history.to_json_dict(), indent=1)
            (HISTORIES / f"{name}.json").write_text(data_json)
