"""``custody keys``: per-tenant KEK rotation from the command line, no key material printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from custody.keys import keyring as keys
from custody.operators import Role
from custody.settings import Settings
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from starter.cli.output import Exit
from tests.helpers import cli
from tests.identities import as_person


def _keys(home: Path, *args: str, settings: Settings | None = None) -> tuple[int, Any, str]:
    """``custody keys ARGS --json`` in this process; its status, answer and printed text."""
    code, answer = cli(settings or Settings(home=home), "keys", *args)
    return code, answer, json.dumps(answer)


def test_keys_cli_rotate_tenant_kek_new_objects_use_it_old_ones_open(tmp_path: Path) -> None:
    """``keys rotate --tenant T`` adds T's KEK version 1: objects written after name it,
    objects written before still open, other tenants and the payload keys are unchanged."""
    home = tmp_path / "home"
    rc, init, _ = _keys(home, "init", "--development")
    assert rc == 0 and init["development"] is True
    directory = home / "keys"
    store = SealedStore(LocalStore(tmp_path / "objects"), keys.require_dir_keyring(directory))
    store.create("records/clinic-a/old", b"before")
    rc, refused, _ = _keys(home, "rotate", "--tenant", "clinic-a")
    assert rc == Exit.DENIED and refused["error"] == "OPERATOR_REQUIRED"  # a decision
    admin = as_person(Settings(home=home), "keeper", Role.ADMIN)
    rc, rotated, out = _keys(home, "rotate", "--tenant", "clinic-a", settings=admin)
    assert rc == 0 and rotated == {"tenant": "clinic-a", "kek_version": 1, "by": "keeper"}
    store.create("records/clinic-a/new", b"after")
    raw = tmp_path / "objects" / "records" / "clinic-a"
    assert (raw / "new").read_bytes()[:6] == b"CSTK\x00\x01"
    assert store.get("records/clinic-a/old") == b"before"
    assert store.get("records/clinic-a/new") == b"after"
    rc, listed, out = _keys(home, "list")
    # _system: the system log, where the identities' versions are anchored.
    assert rc == 0 and listed["tenants"] == {
        "_": "active",
        "_system": "active",
        "clinic-a": "active",
    }
    assert [k["id"] for k in listed["payload_keys"]] == [init["payload_key"]]
    secret = (directory / "kek-clinic-a.1.key").read_text().strip()
    assert secret not in out and secret not in json.dumps(rotated)
