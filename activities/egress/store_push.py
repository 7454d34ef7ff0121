"""Outbox and S3 delivery: one algorithm over a create-if-absent object store.

Both channels write ``<release_id>/<file>`` keys through the project's stores,
whose ``create`` never replaces an existing name:
:class:`custody.stores.local.LocalStore` writes a temp file, fsyncs it and
publishes it with ``os.link``; :class:`custody.stores.s3.S3Store` sends
``PutObject`` with ``If-None-Match: *`` (a 412 means the key is taken).

A taken name is read back and hashed: the same bytes are already delivered,
other bytes are ``DELIVERY_CONFLICT``. The manifest goes last, as the commit
marker, so ``already_delivered`` means the whole packet was there before this
call; a rerun after a crash between files and manifest completes the packet.

The receipt hash (``answer_sha256``) covers the location and, per object, its
key, SHA-256 and size, plus ETag and version id on S3: it is the same for the
first delivery and every redelivery of one packet. Each request is sent once
(botocore's own retries are off: the deliver step's retry policy is the only
retry) within :class:`AttemptLimits`; the deadline is checked between files.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from activities.egress.channels import (
    MANIFEST_NAME,
    AttemptLimits,
    ChannelKind,
    Delivery,
    Packet,
    RecipientChannel,
    S3Access,
    split_s3_target,
)
from custody.canonical import canonical_json
from custody.errors import Code, DeliveryFailed
from custody.stores.base import ObjectMissing, ObjectStore, StoreError, StoreUnavailable
from custody.stores.local import LocalStore


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class StoreChannel:
    """Delivers into an :class:`ObjectStore`; ``create`` never replaces a name."""

    def __init__(
        self,
        kind: ChannelKind,
        store: ObjectStore,
        location: str,
        limits: AttemptLimits,
        stamp: Callable[[str], dict[str, str]] = lambda key: {},
    ) -> None:
        self.kind: ChannelKind = kind
        self.store, self.location, self.limits, self._stamp = store, location, limits, stamp

    def deliver(self, packet: Packet) -> Delivery:
        """Files first, manifest last; a rerun after a crash completes the same packet."""
        deadline = time.monotonic() + self.limits.deadline_s
        with _recipient_errors():
            committed = self.store.exists(f"{packet.release_id}/{MANIFEST_NAME}")
            self._write_files(packet, deadline)
            self._place(packet.release_id, MANIFEST_NAME, packet.manifest)
            objects = [self._describe(packet.release_id, n, d) for n, d in packet.entries()]
        receipt = canonical_json({"location": self.location, "objects": objects})
        return Delivery(
            channel=self.kind,
            location=self.location,
            release_id=packet.release_id,
            packet_sha256=packet.sha256,
            answer_sha256=_sha256(receipt),
            already_delivered=committed,
        )

    def _write_files(self, packet: Packet, deadline: float) -> None:
        for name, data in packet.entries()[:-1]:
            if time.monotonic() > deadline:
                raise DeliveryFailed(Code.RECIPIENT_UNREACHABLE, "deadline passed")
            self._place(packet.release_id, name, data)

    def _place(self, release_id: str, name: str, data: bytes) -> None:
        key = f"{release_id}/{name}"
        if self.store.create(key, data):
            return
        there, ours = _sha256(self.store.get(key)), _sha256(data)
        if there != ours:
            detail = f"release {release_id}: held sha256 {there}, packet sha256 {ours}"
            raise DeliveryFailed(Code.DELIVERY_CONFLICT, detail)

    def _describe(self, release_id: str, name: str, data: bytes) -> dict[str, Any]:
        key = f"{release_id}/{name}"
        return {"key": key, "sha256": _sha256(data), "size": len(data)} | self._stamp(key)


@contextmanager
def _recipient_errors() -> Iterator[None]:
    """Store and OS errors become delivery codes naming only the error type."""
    try:
        yield
    except (StoreUnavailable, ObjectMissing) as exc:
        # ObjectMissing after a refused create: the object vanished between the
        # two calls; the next attempt will see the truth.
        raise _unreachable(type(exc).__name__) from exc
    except StoreError as exc:
        detail = type(exc).__name__
        raise DeliveryFailed(Code.RECIPIENT_REFUSED, detail) from exc
    except OSError as exc:  # a full or unwritable outbox disk may recover
        raise _unreachable(f"{type(exc).__name__} errno {exc.errno}") from exc


def _unreachable(detail: str) -> DeliveryFailed:
    return DeliveryFailed(Code.RECIPIENT_UNREACHABLE, detail)


def outbox_channel(spec: RecipientChannel, limits: AttemptLimits) -> StoreChannel:
    """A directory channel; files get mode 0600 and folders 0700, as LocalStore makes them."""
    _no_symlink(Path(spec.target))
    with _recipient_errors():  # LocalStore creates the directory: it may be unwritable
        store = _Outbox(Path(spec.target))
    return StoreChannel("outbox", store, spec.location, limits)


class _Outbox(LocalStore):
    """A folder others may write too: every path is resolved and checked before it is used,
    so a symlink planted in it (to the keys, say) is refused, never followed."""

    def _path(self, key: str) -> Path:
        path = super()._path(key)
        _no_symlink(path)
        return path


def _no_symlink(path: Path) -> None:
    if os.path.realpath(path) != os.path.normpath(path):
        raise DeliveryFailed(Code.RECIPIENT_ADDRESS_REFUSED, "a symlink in the outbox's path")


def s3_channel(
    spec: RecipientChannel, access: S3Access, ca_file: str | None, limits: AttemptLimits
) -> StoreChannel:
    """A bucket channel with its own client: the recipient's endpoint and keys, not ours."""
    import boto3
    from botocore.config import Config

    from custody.stores.s3 import S3Store

    # As custody.stores.s3.client_from_settings builds the store's own client, but
    # each request sent once: a failed attempt is the deliver step's to retry.
    timeout = min(limits.request_timeout_s, limits.deadline_s)
    config = Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"total_max_attempts": 1, "mode": "standard"},
        s3={"addressing_style": "path" if access.endpoint_url else "auto"},
    )
    key_id, secret, token = access.access_key_id, access.secret_access_key, access.session_token
    client = boto3.client(
        "s3",
        endpoint_url=access.endpoint_url,
        region_name=access.region,
        aws_access_key_id=key_id.get_secret_value() if key_id else None,
        aws_secret_access_key=secret.get_secret_value() if secret else None,
        aws_session_token=token.get_secret_value() if token else None,
        verify=ca_file,
        config=config,
    )
    bucket, prefix = split_s3_target(spec.target)
    store = S3Store(client, bucket, prefix)
    return StoreChannel("s3", store, spec.location, limits, _s3_stamp(store))


def _s3_stamp(store: Any) -> Callable[[str], dict[str, str]]:
    """ETag and version id of a written key, so the receipt names the exact objects."""

    def stamp(key: str) -> dict[str, str]:
        try:
            head = store.client.head_object(Bucket=store.bucket, Key=store.prefix + key)
        except Exception as exc:  # botocore's errors have no common base worth naming
            raise _unreachable(f"head {type(exc).__name__}") from exc
        return {"etag": str(head.get("ETag", "")), "version_id": str(head.get("VersionId", ""))}

    return stamp
