"""Delivery channels: how a release packet reaches a recipient outside Custody, once.

A tenant registers each recipient with one channel (:class:`RecipientChannel`):

* ``outbox`` - an absolute local directory, for development: ``<dir>/<release_id>/<file>``.
* ``s3`` - ``s3://bucket/prefix``: ``<prefix>/<release_id>/<file>``, each a
  conditional create (both in :mod:`activities.egress.store_push`).
* ``https`` - one POST per packet with an ``Idempotency-Key``
  (:mod:`activities.egress.https_push` documents the wire format). ``http://`` is
  accepted only for loopback hosts (127.0.0.0/8, ::1, ``localhost``), so tests
  and development can use a plain local server; anything else must be TLS.
  Production refuses both (:mod:`activities.egress.reach`: where a channel may go).

Exactly once at the recipient: a retried delivery (after a crash, a timeout, a
worker restart) finds what the first attempt left and treats identical bytes as
already delivered and different bytes as ``DELIVERY_CONFLICT``. For outbox and
S3 the packet manifest is written last, as the commit marker. A channel tries
once per call, within :class:`AttemptLimits`; trying again is the deliver
step's retry policy (``workflows.retries.deliver``), the only retry there is.
Messages carry codes, ids and hashes only.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath
from typing import Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, model_validator

from custody.canonical import canonical_json
from custody.errors import Code, DeliveryFailed

# --- packets ------------------------------------------------------------------

MANIFEST_NAME = "manifest.json"
PACKET_FORMAT = "custody-packet/1"
# One path segment: no "/", no leading dot (so no "..", no hidden temp names).
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_segment(value: str, what: str) -> None:
    if not _SEGMENT.fullmatch(value):
        raise DeliveryFailed(Code.PACKET_INVALID, f"bad {what}")


@dataclass(frozen=True)
class PacketFile:
    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Packet:
    """What one release sends: files plus a manifest naming each file's SHA-256 and size."""

    release_id: str
    files: tuple[PacketFile, ...]

    def __post_init__(self) -> None:
        _check_segment(self.release_id, "release id")
        names = [f.name for f in self.files]
        for name in names:
            _check_segment(name, "file name")
        if not names or len(set(names)) != len(names) or MANIFEST_NAME in names:
            raise DeliveryFailed(Code.PACKET_INVALID, "empty, repeated or reserved names")

    @cached_property
    def manifest(self) -> bytes:
        """Canonical JSON, so the same packet always hashes the same."""
        files = [
            {"name": f.name, "sha256": _sha256(f.data), "size": len(f.data)}
            for f in sorted(self.files, key=lambda f: f.name)
        ]
        return canonical_json(
            {"format": PACKET_FORMAT, "release_id": self.release_id, "files": files}
        )

    @property
    def sha256(self) -> str:
        """The packet's identity: the manifest covers every file's hash."""
        return _sha256(self.manifest)

    def entries(self) -> list[tuple[str, bytes]]:
        """Files in name order, then the manifest: the order a commit marker needs."""
        ordered = sorted(self.files, key=lambda f: f.name)
        return [(f.name, f.data) for f in ordered] + [(MANIFEST_NAME, self.manifest)]


# --- recipients and receipts ----------------------------------------------------

ChannelKind = Literal["outbox", "s3", "https"]
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RecipientChannel(_Model):
    """A recipient's registered channel; invalid targets fail at registration."""

    kind: ChannelKind
    target: str

    @classmethod
    def of(cls, kind: str, target: str) -> RecipientChannel:
        """Validate, answering ``CHANNEL_INVALID`` (without echoing the target)."""
        try:
            return cls.model_validate({"kind": kind, "target": target})
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            raise DeliveryFailed(Code.CHANNEL_INVALID, reason) from None

    @model_validator(mode="after")
    def _check_target(self) -> RecipientChannel:
        if self.kind == "outbox":
            _check_outbox(self.target)
        elif self.kind == "s3":
            split_s3_target(self.target)
        else:
            _check_url(self.target)
        return self

    @property
    def location(self) -> str:
        """Where deliveries go, without credentials or query strings."""
        if self.kind != "https":
            return self.target
        url = urlsplit(self.target)
        return f"{url.scheme}://{url.netloc}{url.path or '/'}"


def _check_outbox(target: str) -> None:
    path = PurePosixPath(target)
    if not path.is_absolute() or "\0" in target or ".." in path.parts:
        raise ValueError("outbox must be an absolute path without '..'")


def split_s3_target(target: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` -> (bucket, prefix); the prefix may be empty."""
    scheme, _, rest = target.partition("://")
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    parts = prefix.split("/") if prefix else []
    if scheme != "s3" or not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise ValueError("s3 target must be s3://bucket[/prefix] with a valid bucket name")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError("s3 prefix has an empty, '.' or '..' segment")
    return bucket, prefix


def _check_url(target: str) -> None:
    url = urlsplit(target)
    _ = url.port  # raises ValueError for a port that is not a number in range
    if url.username is not None or url.password is not None or url.fragment or not url.hostname:
        raise ValueError("https target needs a host and no credentials or fragment")
    if url.scheme == "http" and _is_loopback(url.hostname):
        return  # plain HTTP never leaves the machine: development and tests only
    if url.scheme != "https":
        raise ValueError("https target must be https:// (http:// only for loopback)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Delivery(_Model):
    """The receipt: references and hashes only, fit for workflow history."""

    channel: ChannelKind
    location: str
    release_id: str
    packet_sha256: str
    #: https: SHA-256 of the recipient's answer body; outbox/s3: of what was written.
    answer_sha256: str
    already_delivered: bool
    status: int | None = None  # the HTTP status, https only
    #: https: SHA-256 of the ZIP body sent, what the recipient holds (the tenant's view).
    body_sha256: str | None = None


@dataclass(frozen=True)
class AttemptLimits:
    """How long one delivery attempt may take: each request, and the attempt as a whole.

    Not a retry policy: a channel sends each request once, and an attempt that
    fails raises its code for Temporal to retry (it used to retry inside too,
    three tries per attempt, which multiplied with Temporal's eight into 24).
    ``deadline_s`` keeps a packet of many files from holding a worker past it.
    """

    request_timeout_s: float = 30.0
    deadline_s: float = 60.0

    def __post_init__(self) -> None:
        if min(self.request_timeout_s, self.deadline_s) <= 0:
            raise ValueError("an attempt needs a positive time budget")


class S3Access(_Model):
    """How to reach the recipient's S3 service, with the recipient's own keys
    (``activities.egress.s3_access``). Without keys boto3's usual chain applies,
    which only development against a local endpoint allows."""

    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    session_token: SecretStr | None = None  # an assumed role's


class Channel(Protocol):
    @property
    def kind(self) -> str:
        """``outbox``, ``s3`` or ``https``."""
        ...

    def deliver(self, packet: Packet) -> Delivery: ...
