"""Browser sessions of the codec server: what its cookie carries instead of the token.

A browser signs in once with the master token (``/login``) and gets a random
session id that expires; only that id ever reaches the cookie jar, so a cookie
leaked to another localhost port or read from disk is worth hours, not the token.
Sessions live in memory only: restarting the server signs every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

from custody.errors import ConfigurationError

MIN_TOKEN_CHARS = 32
SESSION_TTL_S = 8 * 3600
MAX_SESSIONS = 256  # only token holders create sessions; the cap bounds memory anyway


def require_strong_token(token: str) -> str:
    """``token`` itself, or a ConfigurationError that names the rule, never the token."""
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigurationError(
            detail=f"codec token is empty or shorter than {MIN_TOKEN_CHARS} characters; "
            "set CUSTODY_CODEC_TOKEN to a random value (e.g. python -c "
            "'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return token


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _digest(session_id: str) -> bytes:
    # Keyed by a hash of the id: a dict lookup's timing then reveals bits of a
    # hash of the guess, never of a live id, so the lookup is constant-time in effect.
    return hashlib.sha256(session_id.encode()).digest()


class Sessions:
    """Expiring random session ids, in memory; ``clock`` is injectable for tests."""

    def __init__(
        self, ttl_s: int = SESSION_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._expiry: dict[bytes, float] = {}

    def create(self) -> str:
        """A new session id, valid for ``ttl_s`` seconds."""
        self._prune()
        while len(self._expiry) >= MAX_SESSIONS:
            del self._expiry[min(self._expiry, key=self._expiry.__getitem__)]
        session_id = secrets.token_urlsafe(32)
        self._expiry[_digest(session_id)] = self._clock() + self.ttl_s
        return session_id

    def valid(self, session_id: str) -> bool:
        """True for a live session; an expired one is forgotten on the way."""
        if not session_id:
            return False
        key = _digest(session_id)
        expiry = self._expiry.get(key)
        if expiry is None:
            return False
        if self._clock() >= expiry:
            del self._expiry[key]
            return False
        return True

    def _prune(self) -> None:
        now = self._clock()
        for key in [k for k, expiry in self._expiry.items() if now >= expiry]:
            del self._expiry[key]
