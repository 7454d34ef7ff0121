"""In production the codec refuses payloads that are not sealed; development still reads them."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.client import Client

from custody.converter import data_converter
from custody.errors import Code, SealInvalid
from custody.keys import keyring as keys
from custody.settings import Settings
from custody.temporal import connect_temporal
from tests.starter.test_temporal_tls import _settings as tls_settings
from tests.starter.test_temporal_tls import pki, tls_proxy  # noqa: F401  (fixtures)


async def test_codec_production_refuses_plaintext_payload(tmp_path: Path) -> None:
    """A production converter raises SEAL_INVALID on an unsealed payload, yet opens sealed ones."""
    ring = keys.init_keyring(tmp_path / "keys", development=False)
    plain = await data_converter().encode([{"a": 1}])
    production = data_converter(ring, require_sealed=True)
    with pytest.raises(SealInvalid) as err:
        await production.decode(plain, [dict])
    assert err.value.code == Code.SEAL_INVALID
    sealed = await production.encode([{"a": 1}])
    assert await production.decode(sealed, [dict]) == [{"a": 1}]


async def test_codec_development_still_reads_plaintext(tmp_path: Path) -> None:
    """Without require_sealed, histories recorded before encryption still decode."""
    ring = keys.init_keyring(tmp_path / "keys", development=True)
    plain = await data_converter().encode(["old history"])
    assert await data_converter(ring).decode(plain, [str]) == ["old history"]


async def test_codec_production_client_refuses_plaintext_memo(
    tmp_path: Path,
    temporal_client: Client,
    temporal_address: str,
    pki: Path,  # noqa: F811  (the fixtures imported above)
    tls_proxy: str,  # noqa: F811
) -> None:
    """A production client from connect_temporal will not decode a plaintext input.

    Production dials Temporal over TLS only: through the test's mTLS listener.
    """
    keys.init_keyring(tmp_path / "keys", development=False)
    # A keyless client writes an unsealed memo, as anyone with access to the frontend could.
    handle = await temporal_client.start_workflow(
        "custody.test.never-run",
        id=f"plain-{uuid4().hex}",
        task_queue=f"none-{uuid4().hex}",
        memo={"note": "plaintext"},
    )
    try:
        for env in ("development", "production"):
            settings = (
                tls_settings(pki, tls_proxy).model_copy(update={"home": tmp_path, "env": env})
                if env == "production"
                else Settings(home=tmp_path, env=env, temporal_address=temporal_address)
            )
            client = await connect_temporal(settings)
            desc = await client.get_workflow_handle(handle.id).describe()
            if env == "production":
                with pytest.raises(SealInvalid):
                    await desc.memo()
            else:
                assert await desc.memo() == {"note": "plaintext"}
    finally:
        await handle.terminate()
