"""The payload codec and the keyring rules around it."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from temporalio.api.failure.v1 import Failure
from temporalio.exceptions import ApplicationError

from custody.converter import data_converter
from custody.errors import ConfigurationError
from custody.keys import keyring as keys
from custody.keys.codec import ENCODING, KEY_ID
from custody.settings import Settings

SECRET = "Jane Example, 12 Elm Street"


async def test_codec_payloads_are_sealed_with_the_newest_key(tmp_path: Path) -> None:
    """New payloads carry the newest key ID and no plaintext; older keys still decrypt."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    old = await data_converter(ring).encode([SECRET])
    new_kid = keys.rotate(tmp_path / "keys")
    fresh = keys.require_dir_keyring(tmp_path / "keys")
    new = await data_converter(fresh).encode([SECRET])
    assert new[0].metadata[KEY_ID].decode() == new_kid and new[0].metadata["encoding"] == ENCODING
    assert SECRET.encode() not in old[0].data + new[0].data
    assert await data_converter(fresh).decode(old + new, [str, str]) == [SECRET, SECRET]


async def test_codec_passes_plain_payloads_through(tmp_path: Path) -> None:
    """A payload without the encryption marker (recorded before encryption) decodes as is."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    plain = await data_converter().encode([{"a": 1}])
    assert await data_converter(ring).decode(plain, [dict]) == [{"a": 1}]


async def test_codec_failure_message_and_stack_are_encoded(tmp_path: Path) -> None:
    """An exception's message is not readable in the failure proto, yet decodes back."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    conv = data_converter(ring)
    try:
        raise ApplicationError(SECRET, type="OCR_ERROR")
    except ApplicationError as err:
        failure = Failure()
        await conv.encode_failure(err, failure)
    assert SECRET.encode() not in failure.SerializeToString()
    assert SECRET in str(await conv.decode_failure(failure))


def test_keys_production_refuses_development_and_missing_keys(tmp_path: Path) -> None:
    """CUSTODY_ENV=production fails fast without keys and with a development set."""
    with pytest.raises(ConfigurationError, match="no keys"):
        keys.load_keyring(Settings(home=tmp_path, env="production"))
    keys.init_keyring(tmp_path / "keys", development=True)
    assert keys.load_keyring(Settings(home=tmp_path)) is not None
    with pytest.raises(ConfigurationError, match="development keys are refused"):
        keys.load_keyring(Settings(home=tmp_path, env="production"))


def test_keys_dir_readable_by_others_is_refused(tmp_path: Path) -> None:
    """A key folder with group or world access stops start-up."""
    keys.init_keyring(tmp_path / "keys", development=False)
    os.chmod(tmp_path / "keys", 0o755)
    with pytest.raises(ConfigurationError, match="0700"):
        keys.load_keyring(Settings(home=tmp_path))


def test_keys_json_secret_never_echoed_when_malformed(tmp_path: Path) -> None:
    """A malformed CUSTODY_KEYS_JSON is refused without repeating its content."""
    leaked = base64.b64encode(b"x" * 31).decode()
    blob = json.dumps({"payload": {"k1": leaked}})
    with pytest.raises(ConfigurationError) as err:
        keys.load_keyring(Settings(home=tmp_path, keys_json=blob))  # type: ignore[arg-type]
    assert leaked not in str(err.value)


def test_keyring_running_process_picks_up_rotation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded keyring starts using a rotated key once its refresh interval passes."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    first = ring.current()[0]
    new_kid = keys.rotate(tmp_path / "keys")
    assert ring.current()[0] == first  # within the interval: unchanged
    monkeypatch.setattr(keys, "REFRESH_S", 0.0)
    assert ring.current()[0] == new_kid


def test_keyring_repr_shows_no_key_material(tmp_path: Path) -> None:
    """A keyring printed in a log or traceback names no key, KEK or token."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    shown = repr(ring)
    material = [*ring.payload.values(), ring.kek("_")]
    texts = [base64.b64encode(k).decode() for k in material] + [repr(k) for k in material]
    assert not any(t in shown for t in texts)
    assert str(ring.codec_token) not in shown and "payload" not in shown
