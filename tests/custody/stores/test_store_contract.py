"""One contract, two backends: a directory, and S3 spoken over HTTP to moto.

Every test taking ``store`` runs against both; the rest pin down what only one
backend can show (file modes, a multi-process race, a dead endpoint, Object Lock).
"""

from __future__ import annotations

import hashlib
import io
import multiprocessing
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from pydantic import SecretStr

from custody.settings import Settings
from custody.stores.base import ObjectMissing, ObjectStore, StoreError, StoreUnavailable
from custody.stores.local import _TMP_MARK, LocalStore
from custody.stores.s3 import S3Store, client_from_settings

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer

BAD_KEYS = ["../x", "/abs", "a//b", "", "a/./b", "a/"]
RACERS = 16


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _moto() -> tuple[ThreadedMotoServer, str]:
    # Imported here: the multi-process race re-imports this module in each child.
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def _s3_store(endpoint: str, prefix: str = "", **kw: Any) -> S3Store:
    """A store on a fresh bucket, with dummy credentials that never touch ~/.aws."""
    lock_days, object_lock = kw.pop("lock_days", None), kw.pop("object_lock", False)
    settings = Settings(
        store="s3",
        s3_endpoint_url=endpoint,
        s3_bucket=f"custody-{uuid.uuid4().hex[:16]}",
        s3_prefix=prefix,
        s3_access_key_id=SecretStr("testing"),
        s3_secret_access_key=SecretStr("testing"),
    )
    client = client_from_settings(settings, **kw)
    store = S3Store(client, settings.s3_bucket, settings.s3_prefix, lock_days)
    store.ensure_bucket(object_lock=object_lock)
    return store


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalStore(tmp_path / "objects")
    # Looked up lazily so a local-only run never starts moto.
    return _s3_store(request.getfixturevalue("moto_endpoint"))


class _ReadSpy(io.BufferedReader):
    """A file that remembers the largest single read, to prove streaming."""

    largest = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data


def test_create_first_writer_wins(store: ObjectStore) -> None:
    """A second create on a taken key returns False and keeps the first bytes."""
    assert store.create("docs/a", b"first") is True
    assert store.create("docs/a", b"second") is False
    assert store.get("docs/a") == b"first"
    assert store.exists("docs/a")


def test_create_from_file_streams_and_round_trips(store: ObjectStore, tmp_path: Path) -> None:
    """A multi-MB file goes in without one whole read and comes back byte for byte."""
    data = os.urandom(6 * 1024 * 1024 + 7)
    (tmp_path / "src").write_bytes(data)
    with _ReadSpy(io.FileIO(tmp_path / "src")) as src:
        assert store.create_from_file("big/one", src) is True
    assert 0 < src.largest < len(data)
    out = io.BytesIO()
    assert store.download("big/one", out, chunk_size=64 * 1024) == len(data)
    assert hashlib.sha256(out.getvalue()).digest() == hashlib.sha256(data).digest()
    assert store.size("big/one") == len(data)
    assert store.create_from_file("big/one", io.BytesIO(b"other")) is False


def test_put_overwrites(store: ObjectStore) -> None:
    """Put replaces whatever the key held."""
    store.put("scratch/x", b"one")
    store.put("scratch/x", b"two, longer")
    assert store.get("scratch/x") == b"two, longer"
    assert store.size("scratch/x") == len(b"two, longer")


def test_missing_key_raises_object_missing(store: ObjectStore) -> None:
    """Reading an absent key raises ObjectMissing, and exists says False."""
    store.create("dir/present", b"x")
    for key in ("nothing/here", "dir"):
        with pytest.raises(ObjectMissing):
            store.get(key)
        with pytest.raises(ObjectMissing):
            store.size(key)
        with pytest.raises(ObjectMissing):
            store.download(key, io.BytesIO())
        assert store.exists(key) is False


def test_delete_is_idempotent(store: ObjectStore) -> None:
    """Deleting twice is fine and the key is gone, so create works again."""
    store.create("gone/k", b"x")
    store.delete("gone/k")
    store.delete("gone/k")
    assert not store.exists("gone/k")
    assert store.create("gone/k", b"again") is True


def test_list_yields_prefix_keys_in_order(store: ObjectStore) -> None:
    """List yields exactly the keys under a string prefix, in lexical order."""
    for key in ["docs/b", "docs/a/1", "docs/a.x", "docsx/z", "other/q", "docs/c"]:
        store.create(key, b"v")
    assert list(store.list("docs/")) == ["docs/a.x", "docs/a/1", "docs/b", "docs/c"]
    assert list(store.list("docs/a")) == ["docs/a.x", "docs/a/1"]
    assert list(store.list("nope/")) == []
    assert list(store.list("")) == sorted(list(store.list("docs")) + ["other/q"])


def test_invalid_key_raises_value_error(store: ObjectStore) -> None:
    """Every operation refuses keys that could escape or alias the namespace."""
    for key in BAD_KEYS:
        calls: list[Callable[[str], object]] = [
            lambda k: store.create(k, b"x"),
            lambda k: store.create_from_file(k, io.BytesIO(b"x")),
            lambda k: store.put(k, b"x"),
            store.get,
            store.exists,
            store.size,
            store.delete,
            lambda k: store.download(k, io.BytesIO()),
        ]
        for call in calls:
            with pytest.raises(ValueError):
                call(key)
    assert list(store.list("")) == []


def _moto_decides_conditional_puts_atomically(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault-free stand-in for S3's own guarantee, said here because it is one.

    moto looks for the key and then writes it, unlocked (``S3Response.put_object``),
    so its threaded server can let two ``If-None-Match: *`` PUTs through on a loaded
    machine; S3 decides a conditional write atomically. One lock around moto's handler
    (the server runs in this process) gives the stand-in S3's semantics; what the race
    then proves is the client's side: one 200, the rest 412 answered as False.
    """
    from moto.s3.responses import S3Response

    lock, put = threading.Lock(), S3Response.put_object

    def atomic(self: S3Response) -> Any:
        with lock:
            return put(self)

    monkeypatch.setattr(S3Response, "put_object", atomic)


def test_create_race_threads_one_winner(
    store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of 16 threads racing to create one key, exactly one wins and its bytes are stored."""
    if isinstance(store, S3Store):
        _moto_decides_conditional_puts_atomically(monkeypatch)
    barrier = threading.Barrier(RACERS)
    results: dict[int, bool] = {}

    def race(i: int) -> None:
        barrier.wait()
        results[i] = store.create("race/k", bytes([i]) * 200_000)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for i, won in results.items() if won]
    assert len(results) == RACERS and len(winners) == 1
    assert store.get("race/k") == bytes([winners[0]]) * 200_000


def test_local_create_failure_leaves_no_temp_file(tmp_path: Path) -> None:
    """A source that fails mid-copy leaves neither the key nor a temp file behind."""

    class Broken(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, _buf: Any) -> int:
            raise OSError("disk went away")

    store = LocalStore(tmp_path / "objects")
    with pytest.raises(OSError, match="disk went away"):
        store.create_from_file("a/b", io.BufferedReader(Broken()))
    assert not store.exists("a/b")
    assert os.listdir(tmp_path / "objects" / "a") == []


def test_local_modes_are_private(tmp_path: Path) -> None:
    """The root and its folders are 0700 and every object is 0600."""
    store = LocalStore(tmp_path / "objects")
    store.create("t/sub/created", b"x")
    store.put("t/put", b"x")
    for folder in ("", "t", "t/sub"):
        assert stat.S_IMODE((tmp_path / "objects" / folder).stat().st_mode) == 0o700
    for key in ("t/sub/created", "t/put"):
        assert stat.S_IMODE((tmp_path / "objects" / key).stat().st_mode) == 0o600


def test_local_folder_removed_after_use_is_made_again(tmp_path: Path) -> None:
    """The store remembers the folders it made; one removed behind its back is made again
    (0700), for a create and a put alike."""
    store = LocalStore(tmp_path / "objects")
    store.create("t/sub/a", b"x")
    shutil.rmtree(tmp_path / "objects" / "t")
    assert store.create("t/sub/b", b"y")
    shutil.rmtree(tmp_path / "objects" / "t")
    store.put("t/sub/c", b"z")
    assert (store.get("t/sub/c"), list(store.list("t/"))) == (b"z", ["t/sub/c"])
    for folder in ("t", "t/sub"):
        assert stat.S_IMODE((tmp_path / "objects" / folder).stat().st_mode) == 0o700


def test_local_list_skips_temp_files(tmp_path: Path) -> None:
    """A leftover temp file (a crash mid-write) is never listed, and its name is no key."""
    store = LocalStore(tmp_path / "objects")
    store.create("t/real", b"x")
    (tmp_path / "objects" / "t" / f"{_TMP_MARK}dead").write_bytes(b"partial")
    assert list(store.list("t/")) == ["t/real"]
    with pytest.raises(ValueError):
        store.get(f"t/{_TMP_MARK}dead")


def _process_racer(root: str, i: int, barrier: Any) -> None:
    barrier.wait()
    won = LocalStore(Path(root)).create("race/p", f"process-{i}".encode() * 50_000)
    sys.exit(10 if won else 11)


def test_local_create_race_processes_one_winner(tmp_path: Path) -> None:
    """Of 4 processes racing to create one key, exactly one wins and its bytes are stored."""
    ctx = multiprocessing.get_context("spawn")  # no fork: moto's threads may be running
    barrier = ctx.Barrier(4)
    root = str(tmp_path / "objects")
    procs = [ctx.Process(target=_process_racer, args=(root, i, barrier)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=30)
    codes = [p.exitcode for p in procs]
    assert Counter(codes) == {10: 1, 11: 3}, codes
    winner = codes.index(10)
    assert LocalStore(Path(root)).get("race/p") == f"process-{winner}".encode() * 50_000


def test_s3_prefix_is_applied_and_stripped(moto_endpoint: str) -> None:
    """Keys live under the configured prefix in the bucket and list strips it again."""
    store = _s3_store(moto_endpoint, prefix="/tenant-a/")
    store.create("k/1", b"x")
    store.client.put_object(Bucket=store.bucket, Key="elsewhere/k/2", Body=b"y")
    raw = store.client.list_objects_v2(Bucket=store.bucket)["Contents"]
    assert sorted(o["Key"] for o in raw) == ["elsewhere/k/2", "tenant-a/k/1"]
    assert list(store.list("")) == ["k/1"]


def test_s3_unreachable_endpoint_raises_store_unavailable() -> None:
    """Once the endpoint is gone, operations raise StoreUnavailable naming only the key."""
    server, endpoint = _moto()
    store = _s3_store(endpoint, connect_timeout=0.5, read_timeout=0.5, max_attempts=1)
    assert store.create("k", b"secret payload") is True
    server.stop()
    server._server.server_close()  # type: ignore[union-attr]  # stop() leaves it listening
    for call in (store.get, store.exists, lambda k: store.create(k, b"secret payload")):
        with pytest.raises(StoreUnavailable) as err:
            call("k")
        assert str(err.value).startswith("k:") and "secret" not in str(err.value)
    with pytest.raises(StoreUnavailable):
        list(store.list(""))


def test_s3_object_lock_sets_compliance_retention(moto_endpoint: str) -> None:
    """With object_lock_days, a create leaves the object under COMPLIANCE retention."""
    store = _s3_store(moto_endpoint, object_lock=True, lock_days=1)
    assert store.create("evidence/doc", b"sealed") is True
    assert store.create("evidence/doc", b"forged") is False
    # moto 5.2 has no GetObjectRetention handler; HEAD reports the same retention.
    head = store.client.head_object(Bucket=store.bucket, Key="evidence/doc")
    assert head["ObjectLockMode"] == "COMPLIANCE"
    assert head["ObjectLockRetainUntilDate"] > datetime.now(UTC)
    with pytest.raises(ClientError, match="AccessDenied"):
        store.client.delete_object(
            Bucket=store.bucket, Key="evidence/doc", VersionId=head["VersionId"]
        )
    assert store.get("evidence/doc") == b"sealed"


def test_s3_ensure_bucket_refuses_unlocked_bucket_for_object_lock(moto_endpoint: str) -> None:
    """Asking for Object Lock on an existing bucket without it is an error, not a no-op."""
    store = _s3_store(moto_endpoint)
    with pytest.raises(StoreError, match="without Object Lock"):
        store.ensure_bucket(object_lock=True)


def _stubbed(responses: list[tuple[str, int, str]]) -> tuple[S3Store, Stubber]:
    settings = Settings(
        store="s3", s3_access_key_id=SecretStr("x"), s3_secret_access_key=SecretStr("x")
    )
    store = S3Store.from_settings(settings)
    stub = Stubber(store.client)
    for op, status, code in responses:
        if status == 200:
            stub.add_response(op, {"ContentLength": 1})
        else:
            stub.add_client_error(op, service_error_code=code, http_status_code=status)
    stub.activate()
    return store, stub


def test_s3_conflict_with_visible_object_is_not_created() -> None:
    """A 409 ConditionalRequestConflict counts as taken once head_object sees the object."""
    store, stub = _stubbed(
        [("put_object", 409, "ConditionalRequestConflict"), ("head_object", 200, "")]
    )
    assert store.create("k", b"x") is False
    stub.assert_no_pending_responses()


def test_s3_conflict_without_object_raises_store_unavailable() -> None:
    """A 409 with nothing visible yet is an unknown outcome: StoreUnavailable, retry later."""
    store, _ = _stubbed(
        [("put_object", 409, "ConditionalRequestConflict"), ("head_object", 404, "404")]
    )
    with pytest.raises(StoreUnavailable, match="ConditionalRequestConflict"):
        store.create("k", b"x")


def test_s3_throttling_raises_store_unavailable() -> None:
    """SlowDown and 5xx answers are transient; access denied is a plain StoreError."""
    store, _ = _stubbed(
        [
            ("get_object", 503, "SlowDown"),
            ("get_object", 500, "InternalError"),
            ("get_object", 403, "AccessDenied"),
        ]
    )
    for _ in range(2):
        with pytest.raises(StoreUnavailable):
            store.get("k")
    with pytest.raises(StoreError) as err:
        store.get("k")
    assert not isinstance(err.value, StoreUnavailable)


def test_stores_package_imports_without_boto3() -> None:
    """Importing the store package and the local store never loads boto3."""
    code = "import sys, custody.stores, custody.stores.local; print('boto3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_s3_sse_kms_is_requested_on_every_write(moto_endpoint: str) -> None:
    """With sse_kms_key_id, creates and puts are stored SSE-KMS under that key (HEAD says so)."""
    import boto3

    kms = boto3.client(
        "kms",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    key_id = kms.create_key(Description="custody test")["KeyMetadata"]["KeyId"]
    plain = _s3_store(moto_endpoint)
    store = S3Store(plain.client, plain.bucket, sse_kms_key_id=key_id)
    assert store.create("records/_/doc", b"sealed") is True
    with io.BytesIO(b"streamed") as src:
        assert store.create_from_file("sources/_/doc", src) is True
    store.put("work/_/page", b"scratch")
    plain.put("work/_/plain", b"no kms")
    for key in ("records/_/doc", "sources/_/doc", "work/_/page"):
        head = store.client.head_object(Bucket=store.bucket, Key=key)
        assert head["ServerSideEncryption"] == "aws:kms", key
        assert head["SSEKMSKeyId"].endswith(key_id), key
    head = store.client.head_object(Bucket=store.bucket, Key="work/_/plain")
    assert head.get("ServerSideEncryption") != "aws:kms"
    assert store.get("records/_/doc") == b"sealed"
