"""``custody keys shred``: only a tenant's own scope, and a signed record the system log holds.

In this process (the CLI's parser and handler, ``tests.helpers.cli``), on a
development keyring and signing key under a fresh home, acting as an admin (a
shred is a signed decision).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custody.canonical import canonical_json
from custody.errors import Code, DocumentRejected
from custody.keys import keyring as keys
from custody.ledger.events import Ledger
from custody.ledger.signing import Signature, signer_from_settings, verify
from custody.operators import Role
from custody.settings import Settings
from custody.stores import open_raw_store, open_store
from custody.stores.system import SYSTEM_SCOPE
from starter.cli.keys import SHRED_EVENT
from starter.cli.output import Exit
from starter.edge import tenants
from tests.helpers import cli as _cli
from tests.identities import as_person


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    keys.init_keyring(tmp_path / "keys", development=True)
    return as_person(Settings(home=tmp_path), "owner", Role.ADMIN)


@pytest.mark.parametrize("scope", ["_system", "_", "signing", "by-file", "fields", "state"])
def test_keys_shred_refuses_system_scopes(settings: Settings, scope: str) -> None:
    """The ledger's scope, no-tenant and names that share a KEK with system objects: refused,
    and nothing is destroyed."""
    rc, answer = _cli(settings, "keys", "shred", scope, "--confirm", scope)
    assert (rc, answer["error"]) == (Exit.USAGE, Code.TENANT_INVALID)
    assert not list((settings.home / "keys").glob("*.shredded"))


def test_tenants_refuse_names_that_share_a_system_scope(settings: Settings) -> None:
    """``signing`` and ``by-file`` cannot be tenants: their objects' KEK is the system's."""
    for name in ("signing", "by-file"):
        with pytest.raises(DocumentRejected) as info:
            tenants.add(open_store(settings), name)
        assert info.value.code == Code.TENANT_INVALID


def test_keys_shred_record_is_signed_and_in_the_system_log(settings: Settings) -> None:
    """The record verifies with the signing key; the system log's event names its hash;
    a second shred keeps the first record and event."""
    rc, answer = _cli(settings, "keys", "shred", "clinic-a", "--confirm", "clinic-a")
    assert rc == Exit.OK, answer
    stored = json.loads(open_raw_store(settings).get("shred/clinic-a.json"))
    signer = signer_from_settings(settings)
    body = canonical_json(stored["record"])
    signature = Signature.model_validate(stored["signature"])
    assert verify(body, signature, {signer.kid: signer.public_record()}) is None
    event = Ledger(open_store(settings), SYSTEM_SCOPE).find(answer["event_seq"])
    assert event is not None and event.kind == SHRED_EVENT
    assert event.detail == {"tenant": "clinic-a", "record_sha256": answer["record_sha256"]}
    rc, again = _cli(settings, "keys", "shred", "clinic-a", "--confirm", "clinic-a")
    assert (rc, again["event_seq"], again["at"]) == (Exit.OK, answer["event_seq"], answer["at"])
