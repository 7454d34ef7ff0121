"""Custody's log checked by code nobody here wrote: aics-tlog (C2SP tlog-tiles, signed notes,
cosignatures), in a Python 3.12 virtualenv of its own.

aics-tlog needs Python >= 3.12 and the project runs on 3.11, so the test makes
a virtualenv under ``~/.cache/custody-tests/`` once (pip from the package index)
and runs ``aics_check.py`` there: it imports nothing from Custody. It verifies
the checkpoint Custody wrote (log signature, key hash, the witness's
cosignature, quorum 1), authenticates every hash tile and entry bundle against
the signed root, reads entries through its verified reader, and builds and
verifies inclusion and consistency proofs from the tiles; Custody's own proofs
must be the same hashes. Skipped, with the reason, only outside CI when no
Python 3.12 or no package index is at hand; in CI (``CI`` set) that fails.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest

from custody.ledger.checkpoints import Notary, log_vkey
from custody.ledger.cosign import vkey
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer
from custody.ledger.witness import WitnessClient
from custody.stores.local import LocalStore
from starter.evidence.verify.heads import stored_note

CACHE = Path.home() / ".cache" / "custody-tests" / "aics-tlog-0.2.1"
CHECK = Path(__file__).with_name("aics_check.py")
INDEXES = [0, 255, 256, 511, 612, 699]


def _python() -> Path:
    """aics-tlog's interpreter: built once, then reused."""
    python = CACHE / "bin" / "python"
    if python.exists():
        return python
    found = sorted(glob.glob("/root/.pyenv/versions/3.12*/bin/python")) + [
        p for p in ("/usr/bin/python3.12", "/usr/local/bin/python3.12") if Path(p).exists()
    ]
    if not found:
        _unavailable("no Python 3.12 here (aics-tlog needs >= 3.12)")
    try:
        subprocess.run([found[0], "-m", "venv", str(CACHE)], check=True, timeout=300)
        pip = [str(python), "-m", "pip", "install", "-q", "aics-tlog==0.2.1"]
        subprocess.run(pip, check=True, timeout=600, capture_output=True)
    except (subprocess.SubprocessError, OSError) as err:
        _unavailable(f"could not install aics-tlog ({type(err).__name__})")
    return python


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"aics-tlog is required in CI: {why}")
    pytest.skip(why)


def test_independent_aics_tlog_verifies_custodys_tiles_checkpoint_and_proofs(
    tmp_path: Path, signer: Signer, witness: WitnessClient
) -> None:
    """700 events over three tiles, integrated in uneven batches and cosigned: aics-tlog
    accepts all of it, and its proofs are Custody's."""
    python = _python()
    store = LocalStore(tmp_path / "objects")  # unsealed: the tiles are plain files
    ledger = Ledger(store, "t", Notary(signer, cosigners=[witness]))
    for i in range(700):
        ledger.append("staged", sha256=f"{i % 9:064x}", actor=f"a{i}")
        if i in (99, 300, 511):
            ledger.flush()  # checkpoints at 100, 301 and 512 along the way
    ledger.flush()
    newest = Ledger(store, "t").newest_checkpoint()
    old = stored_note(Ledger(store, "t"), 301)
    assert newest is not None and old is not None
    (tmp_path / "checkpoint").write_bytes(newest)
    (tmp_path / "old").write_bytes(old)
    spec = {
        "tiles": str(tmp_path / "objects" / "ledger" / "t"),
        "checkpoint": str(tmp_path / "checkpoint"),
        "old_checkpoint": str(tmp_path / "old"),
        "log_vkey": log_vkey(signer),
        "witness_vkey": vkey(witness.name, witness.key),
        "indexes": INDEXES,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    run = subprocess.run(
        [str(python), str(CHECK), str(tmp_path / "spec.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["checkpoint_ok"] and out["origin"] == "custody.ledger/t" and out["size"] == 700
    assert out["tiles"] >= 4 and out["bundles"] == 3
    tree = Ledger(store, "t").tree()
    for index in INDEXES:
        theirs = out["proofs"][str(index)]
        assert theirs["ok"] and theirs["entry"].encode() == tree.entry(index)
        assert theirs["proof"] == [h.hex() for h in tree.inclusion(index)]
    assert out["consistency_ok"]
    assert out["consistency"] == [h.hex() for h in tree.consistency(301)]
