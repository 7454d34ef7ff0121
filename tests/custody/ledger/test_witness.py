"""The independent witness (``custody witness serve``) and what it stops: truncation, rewriting.

A real witness server runs on loopback with its own directory; the notary
sends it each integrated checkpoint over HTTP (C2SP tlog-witness). The
attacks are the issue's: an insider holding the store and the log's signing
key truncates the log, or drops an egress event, re-signs everything and
appends past the old head. ``custody audit verify`` and ``custody verify``
(``verify_log``, ``LogProofs``) must fail both, with the witness.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from custody import egress as eg
from custody.errors import Code, ConfigurationError
from custody.ledger import tlog
from custody.ledger.checkpoints import Notary, log_vkey, notary_from_settings
from custody.ledger.cosign import cosigned_by, parse_vkey, vkey
from custody.ledger.events import Ledger
from custody.ledger.signing import PublicKeyRecord, Signer, rotate
from custody.ledger.witness import WITNESS_HOME, WitnessClient, WitnessPolicy, policy_from_settings
from custody.settings import Settings
from custody.state.egress import record_egress
from custody.stores.local import LocalStore
from starter.evidence.verify.audit import verify_log
from starter.evidence.verify.proofs import LogProofs
from starter.evidence.verify.report import Report
from starter.witness.state import WitnessState
from tests.custody.ledger.forge import forge, history

DOC = "d0" * 32


def _policy(client: WitnessClient) -> WitnessPolicy:
    return WitnessPolicy({client.name: client.key}, 1, (client,))


def _keys(signer: Signer) -> dict[str, PublicKeyRecord]:
    return {signer.kid: signer.public_record()}


def _honest(root: Path, signer: Signer, client: WitnessClient, n: int = 30) -> LocalStore:
    """``n`` events of one document, every tenth an export (egress event), all witnessed."""
    store = LocalStore(root)
    ledger = Ledger(store, "t", Notary(signer, cosigners=[client]))
    for i in range(n):
        if i % 10 == 9:
            record_egress(
                store,
                "t",
                eg.EgressKind.EXPORT,
                actor="auditor",
                policy=eg.EXPORT_POLICY,
                documents=[DOC],
                bytes_sha256="e" * 64,
                size=i,
            )
        else:
            ledger.append("staged", sha256=DOC, actor=f"w{i}")
        ledger.flush()  # one integration each: the witness sees every size
    return store


def _failed(report: Report) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if not c.ok}


def _note(signer: Signer, size: int, root: bytes, origin: str = "custody.ledger/t") -> bytes:
    """A checkpoint signed as the notary signs one."""

    def sign(message: bytes) -> bytes:
        return base64.b64decode(signer.sign(message).sig)

    name = f"custody-signing/{signer.kid}"
    return tlog.sign_note(tlog.Note(origin, size, root), name, signer.public, sign)


def _lines(proof: list[bytes]) -> bytes:
    return b"".join(base64.b64encode(h) + b"\n" for h in proof)


def test_witness_protocol_answers_as_c2sp_says(tmp_path: Path, signer: Signer) -> None:
    """200 cosigned; 409 with its size; 422 a bad proof; 403 an unknown key; 404 unknown log."""
    state = WitnessState(tmp_path / "w")
    state.trust(log_vkey(signer))
    leaves = [tlog.leaf_hash(b"%d" % i) for i in range(10)]
    six, ten = _note(signer, 6, tlog.root(leaves[:6])), _note(signer, 10, tlog.root(leaves))
    first = state.add_checkpoint(b"old 0\n\n" + six)
    assert first.status == 200
    name, _, key = parse_vkey(state.vkey)
    assert name in cosigned_by(six + first.body, {name: key})
    stale = state.add_checkpoint(b"old 0\n\n" + ten)
    assert (stale.status, stale.body, stale.kind) == (409, b"6\n", "text/x.tlog.size")
    other_tree = [tlog.leaf_hash(b"x"), *leaves[1:]]
    bad = _lines(tlog.consistency_proof(other_tree, 6))
    assert state.add_checkpoint(b"old 6\n" + bad + b"\n" + ten).status == 422
    good = _lines(tlog.consistency_proof(leaves, 6))
    assert state.add_checkpoint(b"old 6\n" + good + b"\n" + ten).status == 200
    rogue = rotate(tmp_path / "rogue")
    assert state.add_checkpoint(b"old 10\n\n" + _note(rogue, 10, tlog.root(leaves))).status == 403
    alien = _note(signer, 1, leaves[0], origin="example.com/log")
    assert state.add_checkpoint(b"old 0\n\n" + alien).status == 404
    assert state.add_checkpoint(b"old 11\n\n" + ten).status == 400
    assert state.add_checkpoint(b"old 06\n\n" + ten).status == 400  # no leading zeroes


def test_witness_cosigns_every_integration_and_verification_requires_it(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """An honest log: its newest checkpoint cosigned; audit and document proofs pass with it."""
    store = _honest(tmp_path / "objects", signer, witness)
    newest = Ledger(store, "t").newest_checkpoint()
    assert newest is not None and witness.name in cosigned_by(newest, {witness.name: witness.key})
    report = verify_log(store, "t", _keys(signer), policy=_policy(witness))
    assert report.ok, report
    checks = LogProofs(policy=_policy(witness)).checks(
        Ledger(store, "t"), {1, 10, 30}, _keys(signer)
    )
    assert all(c.ok for c in checks), checks
    assert "3 events in checkpoint 30" in checks[0].detail


def test_witness_truncation_fails_audit_and_document_verification(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """The newest 8 events cut away, the rest re-signed: clean alone, FAIL with the witness."""
    root = tmp_path / "objects"
    _honest(root, signer, witness)
    store = forge(root, "t", history(root, "t")[:22], Notary(signer))
    alone = verify_log(store, "t", _keys(signer))
    assert alone.ok, alone  # in the store alone, a clean shorter log
    failed = _failed(verify_log(store, "t", _keys(signer), policy=_policy(witness)))
    assert "cosigned size 30, the log has 22" in failed["ledger.witness"]
    proofs = LogProofs(policy=_policy(witness)).checks(Ledger(store, "t"), {1}, _keys(signer))
    failed = _failed(Report(subject="", ok=False, checks=proofs))
    assert "cosigned size 30, the log has 22" in failed["ledger.witness"]
    assert "no checkpoint cosigned by 1" in failed["ledger.inclusion"]


def test_witness_rewrite_and_outgrow_fails_audit_and_document_verification(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """The issue's attack: the egress event dropped, everything re-signed with the log key,
    the log grown past its old head. The witness refuses to cosign; verification fails."""
    root = tmp_path / "objects"
    _honest(root, signer, witness)
    events = [e for e in history(root, "t") if e.kind != eg.EGRESS_EVENT]
    extra = [events[-1].model_copy(update={"actor": f"x{i}"}) for i in range(10)]
    store = forge(root, "t", events + extra, Notary(signer, cosigners=[witness]))
    ledger = Ledger(store, "t")
    assert ledger.size() == 37 > 30  # outgrown
    newest = ledger.newest_checkpoint()
    assert newest is not None and not cosigned_by(newest, {witness.name: witness.key})
    failed = _failed(verify_log(store, "t", _keys(signer), policy=_policy(witness)))
    assert "ledger.witness" in failed, failed
    proofs = LogProofs(policy=_policy(witness)).checks(Ledger(store, "t"), {1, 5}, _keys(signer))
    assert {c.name for c in proofs if not c.ok} == {"ledger.inclusion", "ledger.witness"}
    without = LogProofs().checks(Ledger(store, "t"), {1, 5}, _keys(signer))
    assert all(c.ok for c in without)  # with no witness required, the rewrite would pass


def test_witness_production_refuses_to_run_without_one(tmp_path: Path, signer: Signer) -> None:
    """CUSTODY_ENV=production with no witness: WITNESS_REQUIRED, for the notary and verifiers;
    in development the witness ``custody up`` started is found by its endpoint file."""
    production = Settings(home=tmp_path, env="production", signing_dir=tmp_path / "signing")
    for make in (policy_from_settings, notary_from_settings):
        with pytest.raises(ConfigurationError) as err:
            make(production)
        assert err.value.code is Code.WITNESS_REQUIRED
    state = WitnessState(tmp_path / "w")
    configured = production.model_copy(
        update={"witness_url": "http://127.0.0.1:1", "witness_keys": state.vkey}
    )
    assert policy_from_settings(configured).quorum == 1
    assert policy_from_settings(Settings(home=tmp_path)).quorum == 0  # development, none running
    local = WitnessState(tmp_path / WITNESS_HOME)
    (local.dir / "endpoint.json").write_text(f'{{"url": "http://x", "vkey": "{local.vkey}"}}')
    found = policy_from_settings(Settings(home=tmp_path))
    assert (found.quorum, found.source, list(found.keys)) == (1, "local-witness", [local.name])


def test_witness_cli_audit_and_verify_fail_the_rewrite(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """The attack above, seen through ``custody audit verify`` and ``custody verify`` with the
    witness configured by environment settings alone: both exit 8 on ``ledger.witness``."""
    home = tmp_path / "home"
    root = home / "objects"
    signer.publish(_honest(root, signer, witness, n=12))
    events = [e for e in history(root, "t") if e.kind != eg.EGRESS_EVENT]
    extra = [events[-1].model_copy(update={"actor": f"x{i}"}) for i in range(4)]
    forge(root, "t", events + extra, Notary(signer, cosigners=[witness]))
    env = {
        **os.environ,
        "CUSTODY_HOME": str(home),
        "CUSTODY_SIGNING_DIR": str(tmp_path / "signing"),
        "CUSTODY_WITNESS_URL": witness.url,
        "CUSTODY_WITNESS_KEYS": vkey(witness.name, witness.key),
    }
    for args in (["audit", "verify", "--tenant", "t"], ["verify", DOC, "--tenant", "t"]):
        run = subprocess.run(
            [sys.executable, "-m", "starter.cli.main", *args, "--json"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        out = json.loads(run.stdout)
        failed = {c["name"] for r in out["reports"] for c in r["checks"] if not c["ok"]}
        assert run.returncode == 8 and "ledger.witness" in failed, (args, out)
