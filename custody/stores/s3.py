"""S3 (or any S3-compatible service) as the object store: the production default.

Create-if-absent is S3's conditional write, ``PutObject`` with
``If-None-Match: *``: the service answers 412 if the key is taken. While
another conditional write to the key is still in flight it may answer 409
instead; then the outcome is not known yet, so we look before we answer.

With ``object_lock_days`` every conditional create also sets a COMPLIANCE
retention, so an evidence object cannot be deleted or overwritten, by anyone,
until it expires. The bucket must have Object Lock enabled.

With ``sse_kms_key_id`` (``CUSTODY_S3_SSE_KMS_KEY_ID``) every write also asks
for SSE-KMS under that key: a second layer under the envelope encryption of
``SealedStore``, so a bucket policy can require it and key access is logged by KMS.

boto3 is imported only here; ``custody.stores.open_store`` loads this module
only when ``CUSTODY_STORE=s3``. Errors leave as :mod:`custody.stores.base`
errors whose messages carry the key and an error code, never object content.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, BinaryIO

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectionError,
    FlexibleChecksumError,
    HTTPClientError,
    IncompleteReadError,
)

from custody.stores.base import ObjectMissing, StoreError, StoreUnavailable, check_key

if TYPE_CHECKING:
    from custody.settings import Settings

CHUNK = 1 << 20
# Connection refused/reset, timeouts, truncated or corrupted bodies: retry later.
_TRANSIENT = (ConnectionError, HTTPClientError, IncompleteReadError, FlexibleChecksumError)
_THROTTLED = {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError"}
_NOT_FOUND = {"NoSuchKey", "NotFound", "404"}


def client_from_settings(
    settings: Settings,
    *,
    connect_timeout: float = 5.0,
    read_timeout: float = 60.0,
    max_attempts: int = 3,
) -> Any:  # boto3 ships no type information for its clients
    """A boto3 S3 client for ``settings``; explicit credentials win over the usual chain."""
    key_id, secret = settings.s3_access_key_id, settings.s3_secret_access_key
    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"max_attempts": max_attempts, "mode": "standard"},
        # MinIO, Ceph and moto behind a custom endpoint expect path-style URLs.
        s3={"addressing_style": "path" if settings.s3_endpoint_url else "auto"},
    )
    return boto3.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region,
        aws_access_key_id=key_id.get_secret_value() if key_id else None,
        aws_secret_access_key=secret.get_secret_value() if secret else None,
        config=config,
    )


#: What must outlive every operator: signed records, the evidence packets, the
#: ledger and its checkpoints, the public keys that verify them, and the
#: sources and texts those records hash. Intake, work and staging are scratch.
EVIDENCE_PREFIXES = ("records/", "evidence/", "ledger/", "keys/signing/", "sources/", "results/")


class S3Store:
    """Objects under ``prefix`` in one bucket."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str = "",
        object_lock_days: int | None = None,
        lock_prefixes: tuple[str, ...] = ("",),
        sse_kms_key_id: str | None = None,
    ) -> None:
        if object_lock_days is not None and object_lock_days < 1:
            raise ValueError("object_lock_days must be at least 1")
        self.client = client
        self.bucket = bucket
        self.prefix = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        self.object_lock_days = object_lock_days
        # Only keys under these prefixes are locked: evidence, not scratch.
        self.lock_prefixes = lock_prefixes
        self._sse: dict[str, str] = (
            {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": sse_kms_key_id}
            if sse_kms_key_id
            else {}
        )

    @classmethod
    def from_settings(cls, settings: Settings, object_lock_days: int | None = None) -> S3Store:
        """With ``CUSTODY_S3_OBJECT_LOCK_DAYS``, evidence and ledger objects get retention."""
        client = client_from_settings(settings)
        days = object_lock_days or settings.s3_object_lock_days
        return cls(
            client,
            settings.s3_bucket,
            settings.s3_prefix,
            days,
            EVIDENCE_PREFIXES,
            sse_kms_key_id=settings.s3_sse_kms_key_id,
        )

    def __repr__(self) -> str:
        return f"S3Store(bucket={self.bucket!r}, prefix={self.prefix!r})"

    def create(self, key: str, data: bytes) -> bool:
        """Store ``data`` at ``key`` only if absent. True if created, False if it existed."""
        return self._create(key, data)

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        """Like :meth:`create`; botocore streams ``src`` from its current position."""
        return self._create(key, src)

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` at ``key``, replacing what is there."""
        with _translate(key):
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, **self._sse)

    def get(self, key: str) -> bytes:
        """The object's bytes; :class:`ObjectMissing` if absent."""
        with _translate(key):
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
            with body:
                return bytes(body.read())

    def download(self, key: str, dst: BinaryIO, chunk_size: int = CHUNK) -> int:
        """Stream the object into ``dst`` in chunks; returns the byte count."""
        count = 0
        with _translate(key):
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
            with body:
                for chunk in body.iter_chunks(chunk_size):
                    dst.write(chunk)
                    count += len(chunk)
        return count

    def exists(self, key: str) -> bool:
        try:
            self.size(key)
        except ObjectMissing:
            return False
        return True

    def size(self, key: str) -> int:
        """Byte length; :class:`ObjectMissing` if absent."""
        with _translate(key):
            head = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        return int(head["ContentLength"])

    def delete(self, key: str) -> None:
        """Remove ``key``; absent is not an error (S3 answers 204 either way)."""
        with _translate(key):
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def list(self, prefix: str) -> Iterator[str]:
        """Keys starting with ``prefix``, in lexical (UTF-8 byte) order as S3 returns them."""
        strip = len(self.prefix)
        with _translate(prefix):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + prefix
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    yield str(obj["Key"])[strip:]

    def ensure_bucket(self, object_lock: bool = False) -> None:
        """Create the bucket if missing; with ``object_lock``, require Object Lock on it."""
        with _translate(self.bucket):
            try:
                self.client.head_bucket(Bucket=self.bucket)
            except ClientError as exc:
                if _status(exc) != 404:
                    raise
                self._create_bucket(object_lock)
                return
            if object_lock:
                self._require_object_lock()

    def _create_bucket(self, object_lock: bool) -> None:
        region = self.client.meta.region_name
        # us-east-1 is the one region that rejects an explicit location constraint.
        where = {} if region in (None, "us-east-1") else {"LocationConstraint": region}
        try:
            self.client.create_bucket(
                Bucket=self.bucket,
                ObjectLockEnabledForBucket=object_lock,
                **({"CreateBucketConfiguration": where} if where else {}),
            )
        except ClientError as exc:
            # Another process created it between our look and our create.
            if _code(exc) != "BucketAlreadyOwnedByYou":
                raise

    def _require_object_lock(self) -> None:
        try:
            conf = self.client.get_object_lock_configuration(Bucket=self.bucket)
        except ClientError as exc:
            if _code(exc) != "ObjectLockConfigurationNotFoundError":
                raise
            conf = {}
        if conf.get("ObjectLockConfiguration", {}).get("ObjectLockEnabled") != "Enabled":
            raise StoreError(f"bucket {self.bucket!r} exists without Object Lock")

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    def _create(self, key: str, body: bytes | BinaryIO) -> bool:
        args: dict[str, Any] = {"Bucket": self.bucket, "Key": self._key(key), "Body": body}
        args |= self._sse
        if self.object_lock_days is not None and key.startswith(self.lock_prefixes):
            until = datetime.now(UTC) + timedelta(days=self.object_lock_days)
            args |= {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": until}
        with _translate(key):
            try:
                self.client.put_object(IfNoneMatch="*", **args)
            except ClientError as exc:
                if _status(exc) == 412:
                    return False
                if _status(exc) == 409 and _code(exc) == "ConditionalRequestConflict":
                    return self._lost_conflict(key)
                raise
        return True

    def _lost_conflict(self, key: str) -> bool:
        """After a 409, the key counts as taken only once we can see the object."""
        if self.exists(key):
            return False
        raise StoreUnavailable(f"{key}: ConditionalRequestConflict, object not visible yet")


@contextmanager
def _translate(key: str) -> Iterator[None]:
    """Turn botocore errors into store errors naming only the key and a code."""
    try:
        yield
    except ClientError as exc:
        raise _store_error(key, exc) from exc
    except _TRANSIENT as exc:
        raise StoreUnavailable(f"{key}: {type(exc).__name__}") from exc


def _store_error(key: str, exc: ClientError) -> StoreError:
    code, status = _code(exc), _status(exc)
    if code in _NOT_FOUND:
        return ObjectMissing(key)
    if status >= 500 or status == 429 or code in _THROTTLED:
        return StoreUnavailable(f"{key}: {code} (HTTP {status})")
    # Access denied, missing bucket, bad request: configuration, not content.
    return StoreError(f"{key}: {code} (HTTP {status})")


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
