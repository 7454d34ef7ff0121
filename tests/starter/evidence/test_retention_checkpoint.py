"""A failed checkpoint is retried without a twin event: appends are idempotent per step.

The witness here is a stand-in that fails its first write, as an unreachable
witness bucket would; that is the fault under test. Everything else is real:
a local store, a signing key, the notary, and the activity's own ``record``
run by Temporal's ``ActivityEnvironment`` as attempt 1 and then attempt 2.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from temporalio import activity
from temporalio.testing import ActivityEnvironment

from activities.audit import record
from custody.errors import StoreUnavailable
from custody.ledger.checkpoints import Notary, witness_key
from custody.ledger.events import Event, Ledger, notarize
from custody.ledger.signing import rotate
from custody.stores.local import LocalStore
from starter.evidence.verify.audit import verify_log

SHA = "ab" * 32


class FailingOnceWitness(LocalStore):
    """Stand-in witness: its first ``create`` raises, later ones store (fault injection)."""

    failed = False

    def create(self, key: str, data: bytes) -> bool:
        if not self.failed:
            self.failed = True
            raise StoreUnavailable("injected witness outage")
        return super().create(key, data)


@activity.defn(name="test.staged")
def _staged(store: LocalStore) -> Event:
    return record(store, "t", "staged", SHA, size_bytes=10)


def test_retention_checkpoint_retry_after_witness_failure_appends_no_twin(tmp_path: Path) -> None:
    """The event is durable once sequenced, so attempt 1 returns though its checkpoint failed
    to reach the archive; a retry of the step (its worker died before reporting) finds the
    event, seals it, and the log holds it once, witnessed."""
    store, witness = LocalStore(tmp_path / "objects"), FailingOnceWitness(tmp_path / "witness")
    signer = rotate(tmp_path / "signing")
    notarize(store, Notary(signer, witness))
    env = ActivityEnvironment()
    first = env.run(_staged, store)
    assert first.seq == 1 and Ledger(store, "t").sequence_numbers() == [1]
    assert witness.failed and not witness.exists(witness_key("t", 1))  # written, not witnessed
    env.info = dataclasses.replace(env.info, attempt=2)
    again = env.run(_staged, store)
    ledger = Ledger(store, "t")
    assert again == first and ledger.sequence_numbers() == [1]
    assert witness.exists(witness_key("t", 1))
    report = verify_log(store, "t", {signer.kid: signer.public_record()}, witness)
    assert report.ok, [c for c in report.checks if not c.ok]


def test_retention_checkpoint_other_steps_of_a_run_still_append(tmp_path: Path) -> None:
    """A retry of a different activity (another step) appends its own event."""
    store = LocalStore(tmp_path / "objects")
    notarize(store, Notary(rotate(tmp_path / "signing")))
    env = ActivityEnvironment()
    env.run(_staged, store)
    env.info = dataclasses.replace(env.info, activity_id="2", attempt=2)
    second = env.run(_staged, store)
    assert second.seq == 2 and Ledger(store, "t").sequence_numbers() == [1, 2]
