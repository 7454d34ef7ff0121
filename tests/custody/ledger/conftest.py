"""Fixtures of the ledger's tests: a signing key, and a witness server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from custody.ledger.checkpoints import log_vkey
from custody.ledger.cosign import parse_vkey
from custody.ledger.signing import Signer, rotate
from custody.ledger.witness import WitnessClient
from starter.witness.server import make_server
from starter.witness.state import WitnessState


@pytest.fixture
def signer(tmp_path: Path) -> Signer:
    return rotate(tmp_path / "signing")


@pytest.fixture
def witness(tmp_path: Path, signer: Signer) -> Iterator[WitnessClient]:
    """A witness server on a free loopback port, its state in a folder of its own."""
    state = WitnessState(tmp_path / "witness-state")
    state.trust(log_vkey(signer))
    server = make_server(state, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    name, _, key = parse_vkey(state.vkey)
    yield WitnessClient(f"http://127.0.0.1:{server.server_address[1]}", name, key)
    server.shutdown()
    server.server_close()
    thread.join(10)
