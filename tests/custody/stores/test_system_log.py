"""The system log read from the plain store that state versions live in (state anchors).

State is kept plain (``open_raw_store``) while the ledger seals the ``_system``
log under the system KEK: a reader holding only the plain store read
ciphertext, and a batch not yet integrated (after ``custody down``) stopped the
OCR worker at the next start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from custody.keys import keyring as keys
from custody.ledger.events import Ledger
from custody.stores.local import LocalStore
from custody.stores.sealed import SealedStore
from custody.stores.system import SYSTEM_SCOPE, system_log_store, system_sealed


def test_system_log_reads_the_sealed_log_through_the_plain_store(tmp_path: Path) -> None:
    """Appended by a sealing writer, read from the plain store: its size, its event, and
    its batches (the plain store alone reads their ciphertext and fails)."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    raw = LocalStore(tmp_path / "objects")
    writer = Ledger(system_sealed(SealedStore(raw, ring)), SYSTEM_SCOPE)
    writer.append("state_version", sha256="ab" * 32, detail={"state": "pools", "n": 1})
    batch = tmp_path / "objects" / "ledger" / SYSTEM_SCOPE / "batch" / "000000000001.json"
    assert not batch.read_bytes().startswith(b"{")  # sealed on disk
    reader = Ledger(system_log_store(raw, ring), SYSTEM_SCOPE)
    event = reader.find(1)
    assert reader.size() == 1 and reader.pending() == []
    assert event is not None and event.kind == "state_version" and event.detail["n"] == 1
    with pytest.raises(ValueError):  # JSON of ciphertext: a decode error, whichever byte
        Ledger(raw, SYSTEM_SCOPE).pending()  # what the worker hit: ciphertext


def test_system_log_store_without_keys_or_over_a_sealing_store_is_that_store(
    tmp_path: Path,
) -> None:
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    raw = LocalStore(tmp_path / "objects")
    assert system_log_store(raw, None) is raw
    sealed = SealedStore(raw, ring, SYSTEM_SCOPE)
    assert system_log_store(sealed, ring) is sealed
