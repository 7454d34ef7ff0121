"""The Web UI's codec server: decodes for the token holder, refuses everyone else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads

from custody.converter import data_converter
from custody.keys import keyring as keys
from custody.keys.keyring import Keyring
from starter.local.codec_server import COOKIE, create_app

UI = "http://localhost:8233"
TOKEN = "test-token-0123456789-abcdefghijklmnop"


@pytest.fixture
def keyring(tmp_path: Path) -> Keyring:
    return keys.init_keyring(tmp_path / "keys", development=True)


@pytest.fixture
async def http(keyring: Keyring) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(keyring, TOKEN, [UI]))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8234") as c:
        yield c


async def _sealed_body(keyring: Keyring, value: object) -> str:
    payloads = await data_converter(keyring).encode([value])
    return json_format.MessageToJson(Payloads(payloads=payloads))


async def test_codec_server_decodes_for_a_valid_token(
    http: httpx.AsyncClient, keyring: Keyring
) -> None:
    """POST /decode with the bearer token returns the plain JSON payload."""
    body = await _sealed_body(keyring, {"text": "Jane Example"})
    resp = await http.post("/decode", content=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status_code == 200
    decoded = json_format.Parse(resp.text, Payloads())
    value = data_converter().payload_converter.from_payloads(decoded.payloads, [dict])
    assert value == [{"text": "Jane Example"}]


async def test_codec_server_refuses_without_token(
    http: httpx.AsyncClient, keyring: Keyring
) -> None:
    """No token or a wrong one: 401, and nothing decoded in the answer."""
    body = await _sealed_body(keyring, "Jane Example")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        resp = await http.post("/decode", content=body, headers=headers)
        assert resp.status_code == 401 and "Jane" not in resp.text


async def test_codec_server_encode_round_trips_under_namespace_path(
    http: httpx.AsyncClient, keyring: Keyring
) -> None:
    """``/<namespace>/encode`` seals; decoding its answer gives the value back."""
    plain = json_format.MessageToJson(
        Payloads(payloads=data_converter().payload_converter.to_payloads(["hello"]))
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    sealed = await http.post("/default/encode", content=plain, headers=auth)
    assert sealed.status_code == 200 and "hello" not in sealed.text
    back = await http.post("/default/decode", content=sealed.text, headers=auth)
    decoded = json_format.Parse(back.text, Payloads())
    assert data_converter().payload_converter.from_payloads(decoded.payloads) == ["hello"]


async def test_codec_server_cors_admits_only_the_ui_origin(http: httpx.AsyncClient) -> None:
    """A preflight from the UI's origin is allowed; from any other origin it is not."""
    ask = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-namespace"}
    ok = await http.options("/decode", headers={"Origin": UI, **ask})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == UI
    bad = await http.options("/decode", headers={"Origin": "http://evil.example", **ask})
    assert bad.status_code == 400 and "access-control-allow-origin" not in bad.headers


async def test_codec_server_login_cookie_authorises_the_browser(
    http: httpx.AsyncClient, keyring: Keyring
) -> None:
    """After /login with the token, the cookie alone authorises /decode; a wrong token gets 401."""
    assert (await http.post("/login", data={"token": "wrong"})).status_code == 401
    resp = await http.post("/login", data={"token": TOKEN})
    assert resp.status_code == 303 and COOKIE in resp.cookies
    body = await _sealed_body(keyring, "Jane Example")
    assert (await http.post("/codec/decode", content=body)).status_code == 200
