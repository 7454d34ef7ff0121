"""``custody audit verify`` and ``audit seal`` as an operator runs them, on a sealed store.

Two tenants' ledgers are written through the real sealing, signing and witness;
then one tenant is crypto-shredded and the other's log is tampered with. The
command runs in this process with the settings a server's environment gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from custody.keys import keyring as keys
from custody.ledger.checkpoints import Notary
from custody.ledger.events import Ledger
from custody.ledger.signing import rotate
from custody.ledger.tiles import bundle_key
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.evidence.trust import fingerprint
from tests.helpers import cli

TENANTS = ("clinic-a", "clinic-b")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    store = SealedStore(LocalStore(tmp_path / "objects"), ring)
    signer = rotate(tmp_path / "signing", development=True)
    signer.publish(store)
    notary = Notary(signer, LocalStore(tmp_path / "witness"))
    for tenant in TENANTS:
        ledger = Ledger(store, tenant)
        for kind in ("staged", "rejected"):
            ledger.append(kind, sha256="cd" * 32)
        notary.seal(ledger, 2)  # appends made without a notary, sealed after the fact
    assert ring.directory is not None
    keys.shred(ring.directory, "clinic-a")
    return tmp_path


def _custody(home: Path, *args: str) -> tuple[int, Any]:
    return cli(Settings(home=home, witness_dir=home / "witness"), *args)


def test_cli_audit_verify_reports_each_tenant_and_never_aborts(home: Path) -> None:
    """A shredded tenant still verifies; a tampered one FAILs alone, by name; exit 8."""
    path = home / "objects" / bundle_key("ledger/clinic-b/", 0, 2)  # sealed: a byte flipped
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))
    code, out = _custody(home, "audit", "verify", "--all-tenants")
    reports = {r["subject"]: r for r in out["reports"]}
    assert code == 8 and reports["ledger/clinic-a"]["ok"] is True, reports
    assert reports["ledger/clinic-b"]["ok"] is False
    assert code == 8 and (out["passed"], out["failed"]) == (1, 1)
    code, out = _custody(home, "audit", "verify", "--tenant", "clinic-a")
    assert code == 0, out


def test_cli_audit_verify_refuses_checkpoints_of_an_unpinned_key(home: Path) -> None:
    """With --trust naming another key, the store's checkpoints and the witness FAIL."""
    other = fingerprint(rotate(home / "elsewhere").public)
    code, out = _custody(home, "audit", "verify", "--tenant", "clinic-a", "--trust", other)
    checks = {c["name"]: c for c in out["reports"][0]["checks"]}
    assert code == 8 and not checks["ledger.tree"]["ok"] and not checks["ledger.witness"]["ok"]


def test_cli_audit_seal_checkpoints_every_tenant(home: Path) -> None:
    """``audit seal`` signs each tenant's current head, and the log then verifies to it."""
    code, out = _custody(home, "audit", "seal")
    assert code == 0 and out == {"clinic-a": 2, "clinic-b": 2}
