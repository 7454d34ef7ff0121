"""The codec server's sign-in: strong token, expiring session cookie, capped login body."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from custody.errors import Code, ConfigurationError
from custody.keys import keyring as keys
from custody.keys.keyring import Keyring
from custody.settings import Settings
from starter.local.codec_server import COOKIE, LOGIN_MAX_BYTES, codec_token, create_app
from starter.local.codec_sessions import MAX_SESSIONS, SESSION_TTL_S, Sessions

UI = "http://localhost:8233"
TOKEN = "codec-session-test-token-0123456789"
PLAIN = '{"payloads": []}'


class Clock:
    """A hand-wound clock, so a session can be made to expire without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def keyring(tmp_path: Path) -> Keyring:
    return keys.init_keyring(tmp_path / "keys", development=True)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def http(keyring: Keyring, clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(keyring, TOKEN, [UI], Sessions(clock=clock))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8234") as c:
        yield c


@pytest.mark.parametrize("weak", ["", "short-secret-Zq9", "x" * 31])
def test_codec_token_refuses_empty_or_short(keyring: Keyring, weak: str) -> None:
    """An empty or sub-32-character token stops start-up with CONFIGURATION, never echoing it."""
    settings = Settings(codec_token=SecretStr(weak))
    with pytest.raises(ConfigurationError) as caught:
        codec_token(settings, keyring)
    assert caught.value.code == Code.CONFIGURATION
    assert weak == "" or weak not in str(caught.value)
    with pytest.raises(ConfigurationError):
        create_app(keyring, weak, [UI])


def test_codec_token_accepts_the_keyring_default(keyring: Keyring) -> None:
    """Without CUSTODY_CODEC_TOKEN the keyring's generated token is long enough to start."""
    assert codec_token(Settings(codec_token=None), keyring) == keyring.codec_token


async def test_codec_login_cookie_is_a_scoped_expiring_session_id(
    http: httpx.AsyncClient,
) -> None:
    """The cookie holds a random id, not the token: HttpOnly, Strict, path-scoped, Max-Age."""
    resp = await http.post("/login", data={"token": TOKEN})
    header = resp.headers["set-cookie"]
    assert resp.status_code == 303 and TOKEN not in header
    session = resp.cookies[COOKIE]
    assert len(session) >= 32 and session != TOKEN
    attrs = {part.strip().lower() for part in header.split(";")}
    assert {"httponly", "samesite=strict", "path=/codec", f"max-age={SESSION_TTL_S}"} <= attrs
    again = await http.post("/login", data={"token": TOKEN})
    assert again.cookies[COOKIE] != session


async def test_codec_session_expires_after_its_ttl(http: httpx.AsyncClient, clock: Clock) -> None:
    """A session authorises /decode until its TTL passes, then answers 401."""
    await http.post("/login", data={"token": TOKEN})
    assert (await http.post("/codec/decode", content=PLAIN)).status_code == 200
    clock.now += SESSION_TTL_S - 1
    assert (await http.post("/codec/decode", content=PLAIN)).status_code == 200
    clock.now += 2
    assert (await http.post("/codec/decode", content=PLAIN)).status_code == 401


async def test_codec_cookie_with_token_or_unknown_id_is_refused(http: httpx.AsyncClient) -> None:
    """The master token or a made-up id in the cookie gets 401; the bearer token still works."""
    for value in (TOKEN, "made-up-session-id-0123456789-abcdefgh"):
        resp = await http.post(
            "/codec/decode", content=PLAIN, headers={"Cookie": f"{COOKIE}={value}"}
        )
        assert resp.status_code == 401
    bearer = await http.post(
        "/codec/decode", content=PLAIN, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert bearer.status_code == 200


async def test_codec_login_refuses_a_large_body_without_reading_it(
    http: httpx.AsyncClient,
) -> None:
    """A login body over the cap gets 413 after at most the cap is read, declared or streamed."""
    declared = await http.post("/login", content=b"token=" + b"a" * LOGIN_MAX_BYTES)
    assert declared.status_code == 413
    pulled = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(10_000):  # 10 MiB if read to the end
            pulled += 1
            yield b"a" * 1024

    streamed = await http.post("/login", content=endless())
    assert streamed.status_code == 413
    assert pulled <= LOGIN_MAX_BYTES // 1024 + 2


def test_codec_sessions_stay_bounded(clock: Clock) -> None:
    """Past MAX_SESSIONS the oldest session is dropped, so memory stays bounded."""
    sessions = Sessions(clock=clock)
    first = sessions.create()
    for _ in range(MAX_SESSIONS):
        clock.now += 1
        last = sessions.create()
    assert not sessions.valid(first) and sessions.valid(last)
