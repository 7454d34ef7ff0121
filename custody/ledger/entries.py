"""An entry of the audit log: the event, its canonical bytes, and the names of its objects.

An event's stored bytes are its canonical JSON (RFC 8785) with its ``hash``, the
SHA-256 of the canonical JSON without it; those bytes are its Merkle leaf.
``json.dumps`` writes the same bytes for what events hold (strings, small
integers, booleans, null, ASCII names) and is several times faster, so it is
used where it provably agrees (:func:`canonical`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, Field

from custody import ids
from custody.canonical import canonical_json
from custody.ledger.legacy import event_key as _legacy_key


class Event(BaseModel):
    seq: int
    prev: str
    at: datetime
    kind: str
    sha256: str | None = None
    code: str | None = None
    actor: str | None = None
    workflow_id: str | None = None
    run_id: str | None = None
    detail: dict[str, str | int | float | bool | list[str] | None] = Field(default_factory=dict)
    hash: str = ""

    def body_hash(self) -> str:
        return hashlib.sha256(
            canonical_json(self.model_dump(mode="json", exclude={"hash"}))
        ).hexdigest()


def prefix(tenant: str | None) -> str:
    return f"ledger/{ids.scope(tenant)}/"


def event_key(tenant: str | None, seq: int) -> str:
    """Where event ``seq`` lived before tiles (custody.ledger.legacy)."""
    return _legacy_key(prefix(tenant), seq)


def checkpoint_key(tenant: str | None, size: int) -> str:
    return f"{prefix(tenant)}tlog/{size:012d}.json"


def newest_checkpoint_key(tenant: str | None) -> str:
    """The newest signed checkpoint: C2SP tlog-tiles' ``checkpoint``, rewritten as it grows."""
    return f"{prefix(tenant)}checkpoint"


def marker_key(tenant: str | None, sha256: str, seq: int) -> str:
    return f"{prefix(tenant)}by-doc/{sha256}/{seq:012d}"


_SCALARS = (str, bool, type(None))  # bool before int: True is an int too
_EXACT = 2**53


def hash_of(entry: bytes) -> str:
    """The ``hash`` member of an entry's bytes (the chain's link to it)."""
    return str(json.loads(entry)["hash"])


def _plain(value: object) -> bool:
    """Whether ``json.dumps`` with sorted keys writes ``value`` exactly as RFC 8785 does:
    ASCII member names, and only strings, small integers, booleans and null (a float's
    ECMAScript form can differ from Python's). A loop over members, scalars checked in
    place: every event is checked while its writers wait."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, int):
        return -_EXACT <= value <= _EXACT
    if isinstance(value, dict):
        for key, member in value.items():
            if not (key.isascii() and (isinstance(member, _SCALARS) or _plain(member))):
                return False
        return True
    if isinstance(value, list):
        return all(_plain(member) for member in value)
    return False


def canonical(body: dict[str, object]) -> bytes:
    """An event's canonical JSON; ``json.dumps`` where it agrees with RFC 8785, it is faster."""
    return _dumps(body) if _plain(body) else canonical_json(body)


def canonical_over(base: dict[str, object]) -> Callable[[dict[str, object]], bytes]:
    """:func:`canonical` of ``{**base, **more}``, with ``base`` checked once: an appended
    event's members are fixed before it is sequenced, and sequencing (one writer at a time)
    adds only its number, the hashes and the time, so only those are checked per body."""
    plain = _plain(base)

    def encode(more: dict[str, object]) -> bytes:
        body = {**base, **more}
        return _dumps(body) if plain and _plain(more) else canonical_json(body)

    return encode


def _dumps(body: dict[str, object]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
