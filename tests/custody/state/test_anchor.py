"""State versions are anchored in the system's transparency log: a fresh process, and
``custody audit verify``, see a newest version deleted or a state rolled back.

Versions are written through ``custody.state.versions`` with real Ed25519 keys on the real
local store, with a real notary and witness folder; the insider then deletes or
rewrites objects with plain store calls, holding no key.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from custody.errors import Code, StateInvalid
from custody.ledger.checkpoints import Notary
from custody.ledger.events import notarize
from custody.ledger.signing import PublicKeyRecord
from custody.settings import Settings
from custody.state import anchor as state_anchor
from custody.state import versions
from custody.state.signers import StateKeys, state_keys
from custody.stores import ObjectStore, open_store
from custody.stores.local import LocalStore
from custody.stores.system import SYSTEM_SCOPE
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.report import Report
from tests.custody.ledger.forge import forge, history

PREFIX = "tenants/clinic-a/record/"
LEGACY = "tenants/clinic-a.json"


@pytest.fixture
def keys(tmp_path: Path) -> StateKeys:
    return state_keys(Settings(home=tmp_path / "home"))


@pytest.fixture
def store(tmp_path: Path, keys: StateKeys) -> LocalStore:
    """Three versions of one prefix, each logged, checkpointed and witnessed."""
    assert keys.signer is not None
    objects = LocalStore(tmp_path / "objects")
    notarize(objects, Notary(keys.signer, LocalStore(tmp_path / "witness")))
    for body in (b'{"revoked":[]}', b'{"revoked":["k1"]}', b'{"revoked":["k1","k2"]}'):
        versions.append(objects, PREFIX, body, keys=keys)
    return objects


def _fresh(store: LocalStore) -> LocalStore:
    """The same objects seen by another process, which has read nothing yet."""
    return LocalStore(store.root)


def _audit(store: ObjectStore, keys: StateKeys, witness: Path | None = None) -> Report:
    assert keys.signer is not None
    trusted: dict[str, PublicKeyRecord] = {keys.signer.kid: keys.signer.public_record()}
    seen = LocalStore(witness) if witness is not None else None
    return verify_log(store, SYSTEM_SCOPE, trusted, seen)


def _failed(report: Report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def test_state_anchor_every_version_is_logged_and_audit_passes(
    tmp_path: Path, store: LocalStore, keys: StateKeys
) -> None:
    """Each version is one state_version event holding its number and hash, no content."""
    events = list(state_anchor.state_log(_fresh(store)).events())
    assert [(e.kind, e.detail["n"]) for e in events] == [("state_version", n) for n in (1, 2, 3)]
    assert events[2].detail["version"] == versions.stored_head(store, PREFIX)[1]
    assert all("revoked" not in json.dumps(e.detail) for e in events)
    report = _audit(_fresh(store), keys, tmp_path / "witness")
    assert report.ok, report
    assert "1 state prefixes match" in {c.name: c.detail for c in report.checks}["state_head"]


def test_state_anchor_deleted_newest_version_is_refused_by_a_fresh_reader(
    tmp_path: Path, store: LocalStore, keys: StateKeys
) -> None:
    """Version 3 deleted: a reader that never saw it raises STATE_INVALID, and so does audit."""
    store.delete(versions._key(PREFIX, 3))
    with pytest.raises(StateInvalid, match="log holds version 3") as err:
        versions.latest(_fresh(store), PREFIX, keys=keys)
    assert err.value.code is Code.STATE_INVALID
    with pytest.raises(StateInvalid):  # nor is a change stacked on the rolled-back chain
        versions.append(_fresh(store), PREFIX, b'{"revoked":[]}', keys=keys)
    failed = _failed(_audit(_fresh(store), keys, tmp_path / "witness"))
    assert set(failed) == {"state_head"}
    assert "log holds version 3, store 2" in failed["state_head"]


def test_state_anchor_restored_legacy_object_is_a_detected_rollback(
    store: LocalStore, keys: StateKeys
) -> None:
    """Every version deleted and the old single object put back: the log still knows version 3."""
    for n in (1, 2, 3):
        store.delete(versions._key(PREFIX, n))
    store.put(LEGACY, b'{"revoked":[]}')
    with pytest.raises(StateInvalid, match="the store only 0"):
        versions.latest(_fresh(store), PREFIX, legacy=LEGACY, keys=keys, production=False)
    assert "store 0" in _failed(_audit(_fresh(store), keys))["state_head"]


def test_state_anchor_newest_version_replaced_by_an_older_one_is_detected(
    store: LocalStore, keys: StateKeys
) -> None:
    """Versions 2 and 3 deleted, version 2's bytes re-put: behind the log, whatever the bytes."""
    older = store.get(versions._key(PREFIX, 2))
    store.delete(versions._key(PREFIX, 3))
    store.delete(versions._key(PREFIX, 2))
    store.put(versions._key(PREFIX, 2), older)
    with pytest.raises(StateInvalid, match="deleted or rolled back"):
        versions.latest(_fresh(store), PREFIX, keys=keys)


def test_state_anchor_deleted_index_entry_too_is_still_caught_by_audit(
    store: LocalStore, keys: StateKeys
) -> None:
    """Deleting the version and its log index entry fools a fresh reader, never audit verify."""
    log = state_anchor.state_log(store)
    newest = max(log.indexed_seqs(state_anchor.key_id(PREFIX)))
    store.delete(versions._key(PREFIX, 3))
    log.store.delete(f"ledger/{SYSTEM_SCOPE}/by-doc/{state_anchor.key_id(PREFIX)}/{newest:012d}")
    assert versions.latest(_fresh(store), PREFIX, keys=keys) == b'{"revoked":["k1"]}'
    failed = _failed(_audit(_fresh(store), keys))
    assert {"state_head", "ledger.index"} <= set(failed), failed


def test_state_anchor_truncated_log_shows_against_the_witness(
    tmp_path: Path, store: LocalStore, keys: StateKeys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version, index entry, log tail and checkpoints all cut back and re-signed: the witnessed
    size still shows."""
    store.delete(versions._key(PREFIX, 3))
    assert keys.signer is not None
    events = history(store.root, SYSTEM_SCOPE)[:2]
    store = forge(store.root, SYSTEM_SCOPE, events, Notary(keys.signer))
    assert versions.latest(_fresh(store), PREFIX, keys=keys) == b'{"revoked":["k1"]}'
    witnessed = dataclasses.replace(keys, witness=LocalStore(tmp_path / "witness"))
    with pytest.raises(StateInvalid, match="shorter than its witnessed size 3"):
        versions.latest(_fresh(store), PREFIX, keys=witnessed)
    assert "ledger.witness" in _failed(_audit(_fresh(store), keys, tmp_path / "witness"))


def test_state_anchor_crash_between_write_and_log_is_tolerated_and_relogged(
    tmp_path: Path, store: LocalStore, keys: StateKeys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version written but never logged reads back and audits as ahead; the next writer logs."""

    def crash(*_: object) -> None:  # stand-in for a process killed right after the write
        raise SystemExit(137)

    monkeypatch.setattr(versions, "log_version", crash)
    with pytest.raises(SystemExit):
        versions.append(_fresh(store), PREFIX, b'{"revoked":["k3"]}', keys=keys)
    monkeypatch.undo()
    assert versions.latest(_fresh(store), PREFIX, keys=keys) == b'{"revoked":["k3"]}'
    report = _audit(_fresh(store), keys)
    assert report.ok and "1 ahead of the log" in report.checks[-1].detail, report
    assert versions.append(_fresh(store), PREFIX, b'{"revoked":[]}', keys=keys) == 5
    logged = [e.detail["n"] for e in state_anchor.state_log(_fresh(store)).events()]
    assert logged == [1, 2, 3, 4, 5]
    assert _audit(_fresh(store), keys, tmp_path / "witness").ok


def test_state_anchor_cli_audit_verify_fails_on_state_head(tmp_path: Path) -> None:
    """``custody audit verify`` in a subprocess names ``state_head`` for the system log; exit 8.

    The versions are written as a CLI change is: no notary, the writer's own checkpoints.
    """
    settings = Settings(home=tmp_path)
    objects = open_store(settings)
    keys = state_keys(settings)
    assert keys.signer is not None
    keys.signer.publish(objects)  # as a worker does: where audit finds the pinned key
    for body in (b"1", b"2", b"3"):
        versions.append(objects, PREFIX, body, keys=keys)
    # No notary in this process: the writer checkpoints each state event itself.
    assert sorted(state_anchor.state_log(objects).checkpoint_sizes()) == [1, 2, 3]
    objects.delete(versions._key(PREFIX, 3))
    env = {**os.environ, "CUSTODY_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", "audit", "verify", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    reports = {r["subject"]: r for r in json.loads(proc.stdout)["reports"]}
    checks = {c["name"]: c for c in reports[f"ledger/{SYSTEM_SCOPE}"]["checks"]}
    assert proc.returncode == 8 and not checks["state_head"]["ok"], checks
    assert all(c["ok"] for name, c in checks.items() if name != "state_head"), checks
