"""Speaking to independent witnesses (C2SP tlog-witness), and which of them verification requires.

After each integration the notary sends the new checkpoint to every witness:

    POST <url>/add-checkpoint
    old <size the witness last cosigned>
    <consistency proof from that size, one base64 hash a line>

    <the signed checkpoint>

and appends the cosignature line a witness answers with 200. A witness
answers 409 with its size when ``old`` is not it (the client then learns the
size and sends the proof from there), and 422 when the proof fails: that is
what stops a rewritten history from being witnessed. Any standard witness can
stand in for ``custody witness serve``.

:class:`WitnessPolicy` is what verification trusts: the witnesses' cosigner keys
(``CUSTODY_WITNESS_KEYS``, vkeys pinned outside the store), how many must have
cosigned (``CUSTODY_WITNESS_QUORUM``) and where to ask each for the size it
last cosigned (``CUSTODY_WITNESS_URL``). In production a policy without a
witness is refused (``WITNESS_REQUIRED``). In development, with none set, the
witness ``custody up`` started is used (its ``endpoint.json``).
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from custody.errors import Code, ConfigurationError
from custody.ledger.cosign import COSIGNATURE_KEY, cosigned_by, parse_vkey
from custody.ledger.tiles import Tree

if TYPE_CHECKING:
    from custody.settings import Settings

_log = logging.getLogger(__name__)
ENDPOINT_FILE = "endpoint.json"
#: The development witness's own folder under CUSTODY_HOME (never the object store).
WITNESS_HOME = "witness-state"


class WitnessClient:
    """One witness: its URL and cosigner key, and the size it last cosigned, per log."""

    def __init__(self, url: str, name: str, key: Ed25519PublicKey, timeout_s: float = 5.0) -> None:
        self.url, self.name, self.key, self.timeout_s = url.rstrip("/"), name, key, timeout_s
        self._sizes: dict[str, int] = {}
        self._lock = threading.Lock()

    def post(self, body: bytes) -> tuple[int, bytes]:
        """One ``add-checkpoint`` request: (status, body); (0, b"") when unreachable."""
        parts = urllib.parse.urlsplit(self.url + "/add-checkpoint")
        https = parts.scheme == "https"
        kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
        conn = kind(parts.netloc, timeout=self.timeout_s)
        try:
            conn.request("POST", parts.path, body, {"Content-Type": "text/plain"})
            reply = conn.getresponse()
            return reply.status, reply.read(4096)
        except OSError:
            return 0, b""
        finally:
            conn.close()

    def cosign(self, note: bytes, origin: str, tree: Tree) -> bytes | None:
        """The witness's cosignature line on ``note`` (for ``tree``), or None when refused."""
        with self._lock:
            old = self._sizes.get(origin, 0)
            for _ in range(3):
                if old > tree.size:
                    break  # the witness saw more of this log than it now holds
                proof = b"".join(base64.b64encode(h) + b"\n" for h in tree.consistency(old))
                status, reply = self.post(b"old %d\n" % old + proof + b"\n" + note)
                if status == 200 and self.name in cosigned_by(note + reply, {self.name: self.key}):
                    self._sizes[origin] = tree.size
                    return reply
                if status != 409 or not reply.strip().isdigit():
                    break
                old = int(reply)  # the size the witness holds: prove from there
            _log.warning("witness %s refused checkpoint %d: %s", self.name, tree.size, status)
            return None

    def size(self, note: bytes) -> int | None:
        """The size this witness last cosigned for ``note``'s log, by the protocol alone
        (``old 0`` is answered 409 with it); None when it cannot say."""
        status, reply = self.post(b"old 0\n\n" + note)
        if status == 409 and reply.strip().isdigit():
            return int(reply)
        return 0 if status == 200 else None


@dataclass(frozen=True)
class WitnessPolicy:
    """The witnesses verification requires: their keys, the quorum, where to ask them."""

    keys: dict[str, Ed25519PublicKey] = field(default_factory=dict)
    quorum: int = 0
    clients: tuple[WitnessClient, ...] = ()
    source: str = "configured"

    def cosigners(self, note: bytes) -> dict[str, int]:
        return cosigned_by(note, self.keys)

    def met(self, note: bytes) -> bool:
        return len(self.cosigners(note)) >= self.quorum


def policy_from_settings(settings: Settings) -> WitnessPolicy:
    """The configured witnesses; in development the local one ``custody up`` runs."""
    urls = [u for u in settings.witness_url.replace(" ", ",").split(",") if u]
    vkeys = [k for k in settings.witness_keys.replace(" ", ",").split(",") if k]
    source = "configured"
    if not urls and not vkeys and settings.env != "production":
        urls, vkeys, source = _local_witness(settings)
    keys = {}
    for text in vkeys:
        name, kind, key = _parse(text)
        keys[name] = key
    quorum = settings.witness_quorum if settings.witness_quorum is not None else min(len(keys), 1)
    if settings.env == "production" and (quorum < 1 or len(keys) < quorum or not urls):
        raise ConfigurationError(
            Code.WITNESS_REQUIRED,
            "production needs an independent witness: set CUSTODY_WITNESS_URL,"
            " CUSTODY_WITNESS_KEYS and CUSTODY_WITNESS_QUORUM (at least 1)",
        )
    named = zip(urls, keys.items(), strict=False)  # a key without a URL verifies, never asked
    clients = tuple(WitnessClient(url, name, key) for url, (name, key) in named)
    return WitnessPolicy(keys, quorum, clients, source)


def _parse(text: str) -> tuple[str, int, Ed25519PublicKey]:
    try:
        name, kind, key = parse_vkey(text)
    except ValueError as err:
        raise ConfigurationError(detail=f"CUSTODY_WITNESS_KEYS: {err}") from None
    if kind != COSIGNATURE_KEY:
        raise ConfigurationError(detail="CUSTODY_WITNESS_KEYS names a key that is not a cosigner's")
    return name, kind, key


def _local_witness(settings: Settings) -> tuple[list[str], list[str], str]:
    """The development witness's URL and vkey, if ``custody up`` started one."""
    try:
        found = json.loads((settings.home / WITNESS_HOME / ENDPOINT_FILE).read_text())
        return [str(found["url"])], [str(found["vkey"])], "local-witness"
    except (OSError, ValueError, KeyError, TypeError):
        return [], [], "none"
