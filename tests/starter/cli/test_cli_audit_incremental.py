"""``custody audit verify --state-file``: only the growth since the auditor last looked.

The log is written through the real ledger on a local store, the command runs in
a subprocess with environment settings only, and the state file lives outside
the store, as an auditor keeps it. The insider then rewrites history below the
kept head and re-signs every checkpoint with the log's own key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from custody.ledger.checkpoints import Notary
from custody.ledger.events import Ledger
from custody.ledger.signing import Signer, rotate
from custody.stores.local import LocalStore
from tests.custody.ledger.forge import forge, history


def _custody(home: Path, *args: str) -> tuple[int, dict[str, object]]:
    env = {**os.environ, "CUSTODY_HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli.main", "audit", "verify", "--tenant", "t", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, json.loads(proc.stdout)


def _append(home: Path, signer: Signer, n: int) -> None:
    store = LocalStore(home / "objects")
    signer.publish(store)  # as the workers do: where verifiers find the key
    ledger = Ledger(store, "t", Notary(signer))
    for i in range(n):
        ledger.append("staged", sha256=f"{i % 3:064x}")
    ledger.flush()


def _report(out: dict[str, object]) -> dict[str, object]:
    reports = out["reports"]
    assert isinstance(reports, list) and len(reports) == 1
    report: dict[str, object] = reports[0]
    return report


def test_cli_audit_state_file_verifies_only_the_growth(tmp_path: Path) -> None:
    """First run: everything, and the head kept. Next: from_size to to_size, the new ones."""
    home, state = tmp_path / "home", tmp_path / "auditor" / "state.json"
    state.parent.mkdir()
    signer = rotate(home / "signing")
    _append(home, signer, 40)
    code, out = _custody(home, "--state-file", str(state), "--json")
    first = _report(out)
    assert code == 0 and first["to_size"] == 40 and first["from_size"] is None, out
    assert json.loads(state.read_text())["heads"]["t"]["size"] == 40
    _append(home, signer, 25)
    code, out = _custody(home, "--state-file", str(state), "--json")
    grown = _report(out)
    assert code == 0 and (grown["from_size"], grown["to_size"]) == (40, 65), out
    checks = {c["name"]: c for c in grown["checks"]}  # type: ignore[attr-defined]
    assert checks["ledger.consistency"]["detail"] == "40 -> 65"
    assert checks["ledger.chain"]["detail"] == "25 new events"
    assert json.loads(state.read_text())["heads"]["t"]["size"] == 65


def test_cli_audit_state_file_catches_a_rewrite_below_the_kept_head(tmp_path: Path) -> None:
    """History rewritten and re-signed with the log's key: the store agrees with itself, the
    auditor's kept head does not; incremental and --full both FAIL, the state stays."""
    home, state = tmp_path / "home", tmp_path / "state.json"
    signer = rotate(home / "signing")
    _append(home, signer, 30)
    assert _custody(home, "--state-file", str(state), "--json")[0] == 0
    events = history(home / "objects", "t")
    events[4] = events[4].model_copy(update={"kind": "forged"})
    forge(home / "objects", "t", events, Notary(signer))
    _append(home, signer, 5)  # and grown past the kept head
    assert _custody(home, "--json")[0] == 0  # a fresh auditor, no state: fooled
    code, out = _custody(home, "--state-file", str(state), "--json")
    checks = {c["name"]: c for c in _report(out)["checks"] if not c["ok"]}  # type: ignore[attr-defined]
    assert (
        code == 8 and "not the one verified (rewritten)" in checks["ledger.consistency"]["detail"]
    )
    code, out = _custody(home, "--state-file", str(state), "--full", "--json")
    assert code == 8 and not _report(out)["ok"]
    assert json.loads(state.read_text())["heads"]["t"]["size"] == 30  # not advanced
