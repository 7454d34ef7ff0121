"""Delivery channels against real parts: a directory, moto's S3 over HTTP, a local HTTP(S) server.

The HTTP recipient below keeps packets by ``Idempotency-Key`` and answers as the
wire format in :mod:`activities.egress.https_push` asks. Faults (a recipient that
is down, fails after storing, or refuses) are the recipient's own behaviour,
not mocks of the client.
"""

from __future__ import annotations

import hashlib
import io
import json
import socket
import ssl
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cryptography import x509
from pydantic import SecretStr

from activities.egress.channels import (
    MANIFEST_NAME,
    AttemptLimits,
    Packet,
    PacketFile,
    RecipientChannel,
    S3Access,
)
from activities.egress.delivery import open_channel
from activities.egress.https_push import packet_zip
from activities.egress.store_push import StoreChannel
from custody.errors import Code, DeliveryFailed
from tests.tls import server_context

if TYPE_CHECKING:
    from moto.server import ThreadedMotoServer

SECRET_TEXT = b"PATIENT SMITH, DOB 1970-01-01"
FAST = AttemptLimits(request_timeout_s=2, deadline_s=5)


def _packet(release_id: str = "rel-0001", text: bytes = SECRET_TEXT) -> Packet:
    pdf = b"%PDF-1.7\n" + text + b"\n%%EOF\n"
    return Packet(release_id, (PacketFile("release.pdf", pdf), PacketFile("notes.txt", text)))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- specs and packets --------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "target"),
    [
        ("outbox", "relative/dir"),
        ("outbox", "/srv/../etc"),
        ("s3", "s3://Upper-Case/prefix"),
        ("s3", "s3://bucket/a//b"),
        ("s3", "https://bucket/prefix"),
        ("https", "http://example.com/in"),
        ("https", "http://10.0.0.1/in"),
        ("https", "https://user:pw@example.com/in"),
        ("https", "ftp://example.com/in"),
        ("https", "https://example.com:99999/in"),
        ("fax", "+1555"),
    ],
)
def test_recipient_channel_rejects_bad_targets(kind: str, target: str) -> None:
    """Malformed targets, and plain HTTP to a non-loopback host, fail as CHANNEL_INVALID."""
    with pytest.raises(DeliveryFailed) as info:
        RecipientChannel.of(kind, target)
    assert info.value.code == Code.CHANNEL_INVALID
    assert target not in str(info.value)


@pytest.mark.parametrize(
    "target",
    ["http://127.0.0.1:8080/in", "http://127.9.9.9/in", "http://[::1]:81/in", "http://localhost/"],
)
def test_recipient_channel_allows_plain_http_only_to_loopback(target: str) -> None:
    """http:// is accepted for 127.0.0.0/8, ::1 and localhost."""
    assert RecipientChannel.of("https", target).kind == "https"


def test_recipient_channel_location_drops_query() -> None:
    """A token in the query string never reaches the receipt."""
    spec = RecipientChannel.of("https", "https://example.com/in?token=abc")
    assert spec.location == "https://example.com/in"


@pytest.mark.parametrize(
    "names", [["../x"], [".hidden"], [MANIFEST_NAME], ["a.pdf", "a.pdf"], [], ["a/b"]]
)
def test_packet_rejects_unsafe_or_reserved_names(names: list[str]) -> None:
    """Names that could escape the release folder or shadow the manifest are PACKET_INVALID."""
    with pytest.raises(DeliveryFailed) as info:
        Packet("rel-1", tuple(PacketFile(n, b"x") for n in names))
    assert info.value.code == Code.PACKET_INVALID


def test_packet_manifest_names_each_file_hash_and_size() -> None:
    """The manifest lists every file with its SHA-256 and size, in name order."""
    packet = _packet()
    manifest = json.loads(packet.manifest)
    assert manifest["release_id"] == "rel-0001"
    assert [f["name"] for f in manifest["files"]] == ["notes.txt", "release.pdf"]
    assert manifest["files"][0] == {"name": "notes.txt", "sha256": _sha(SECRET_TEXT), "size": 29}


# --- outbox -------------------------------------------------------------------


def _outbox(path: Path) -> StoreChannel:
    channel = open_channel(RecipientChannel.of("outbox", str(path)), limits=FAST)
    assert isinstance(channel, StoreChannel)
    return channel


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_outbox_second_delivery_leaves_one_copy(tmp_path: Path) -> None:
    """Delivering a packet twice leaves one copy; the second reports already delivered."""
    channel, packet = _outbox(tmp_path / "out"), _packet()
    first, second = channel.deliver(packet), channel.deliver(packet)
    folder = tmp_path / "out" / packet.release_id
    assert _listing(folder) == ["manifest.json", "notes.txt", "release.pdf"]
    assert (folder / "notes.txt").read_bytes() == SECRET_TEXT
    assert (first.already_delivered, second.already_delivered) == (False, True)
    assert first.answer_sha256 == second.answer_sha256
    assert first.packet_sha256 == _sha((folder / MANIFEST_NAME).read_bytes())


def test_outbox_other_bytes_under_same_release_is_conflict(tmp_path: Path) -> None:
    """A different packet under a delivered release id is DELIVERY_CONFLICT; nothing replaced."""
    channel = _outbox(tmp_path)
    channel.deliver(_packet())
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet(text=b"other text"))
    assert (info.value.code, info.value.retryable) == (Code.DELIVERY_CONFLICT, False)
    assert SECRET_TEXT.decode() not in str(info.value)
    assert (tmp_path / "rel-0001" / "notes.txt").read_bytes() == SECRET_TEXT


def test_outbox_rerun_after_crash_before_manifest_completes_one_copy(tmp_path: Path) -> None:
    """Files written, then a crash before the manifest: a rerun commits one complete copy."""
    channel, packet = _outbox(tmp_path), _packet()
    channel._write_files(packet, deadline=float("inf"))  # the first run stops here
    assert MANIFEST_NAME not in _listing(tmp_path / packet.release_id)
    delivery = channel.deliver(packet)
    assert delivery.already_delivered is False
    assert _listing(tmp_path / packet.release_id) == ["manifest.json", "notes.txt", "release.pdf"]
    assert (tmp_path / packet.release_id / MANIFEST_NAME).read_bytes() == packet.manifest


# --- S3 over HTTP to moto -----------------------------------------------------


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server: ThreadedMotoServer = ThreadedMotoServer(
        ip_address="127.0.0.1", port=_free_port(), verbose=False
    )
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def _access(endpoint: str) -> S3Access:
    return S3Access(
        endpoint_url=endpoint,
        access_key_id=SecretStr("testing"),
        secret_access_key=SecretStr("testing"),
    )


def _bucket(endpoint: str, versioned: bool = True) -> tuple[str, Any]:
    """A fresh bucket; versioned, so a replacing write would show as a second version."""
    import boto3

    name = f"recipient-{uuid.uuid4().hex[:12]}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_bucket(Bucket=name)
    if versioned:
        conf = {"Status": "Enabled"}
        client.put_bucket_versioning(Bucket=name, VersioningConfiguration=conf)
    return name, client


def test_s3_second_delivery_leaves_one_version_per_file(moto_endpoint: str) -> None:
    """Two deliveries write each key once: one version each, the second already delivered."""
    bucket, client = _bucket(moto_endpoint)
    spec = RecipientChannel.of("s3", f"s3://{bucket}/inbox/")
    channel = open_channel(spec, s3=_access(moto_endpoint), limits=FAST)
    first, second = channel.deliver(_packet()), channel.deliver(_packet())
    versions = client.list_object_versions(Bucket=bucket)["Versions"]
    keys = sorted(v["Key"] for v in versions)
    assert keys == [f"inbox/rel-0001/{n}" for n in ("manifest.json", "notes.txt", "release.pdf")]
    assert (first.already_delivered, second.already_delivered) == (False, True)
    assert first.answer_sha256 == second.answer_sha256
    body = client.get_object(Bucket=bucket, Key="inbox/rel-0001/notes.txt")["Body"].read()
    assert body == SECRET_TEXT


def test_s3_other_bytes_under_same_release_is_conflict(moto_endpoint: str) -> None:
    """Different bytes at a taken key are DELIVERY_CONFLICT, and the first object stays."""
    bucket, client = _bucket(moto_endpoint)
    spec = RecipientChannel.of("s3", f"s3://{bucket}")
    channel = open_channel(spec, s3=_access(moto_endpoint), limits=FAST)
    channel.deliver(_packet())
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet(text=b"other text"))
    assert (info.value.code, info.value.retryable) == (Code.DELIVERY_CONFLICT, False)
    assert len(client.list_object_versions(Bucket=bucket)["Versions"]) == 3


def test_s3_rerun_after_crash_before_manifest_completes_one_copy(moto_endpoint: str) -> None:
    """Files put, then a crash before the manifest: a rerun adds only the manifest."""
    bucket, client = _bucket(moto_endpoint)
    spec = RecipientChannel.of("s3", f"s3://{bucket}/in")
    channel = open_channel(spec, s3=_access(moto_endpoint), limits=FAST)
    assert isinstance(channel, StoreChannel)
    channel._write_files(_packet(), deadline=float("inf"))  # the first run stops here
    assert channel.deliver(_packet()).already_delivered is False
    versions = client.list_object_versions(Bucket=bucket)["Versions"]
    assert sorted(v["Key"].rsplit("/", 1)[1] for v in versions) == [
        "manifest.json",
        "notes.txt",
        "release.pdf",
    ]


def test_outbox_unwritable_directory_is_retryable(tmp_path: Path) -> None:
    """An outbox that cannot be created is RECIPIENT_UNREACHABLE: a disk can be fixed."""
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(DeliveryFailed) as info:
        open_channel(RecipientChannel.of("outbox", str(tmp_path / "file" / "out")))
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)


def test_s3_missing_bucket_is_refused(moto_endpoint: str) -> None:
    """A bucket that does not exist is configuration: RECIPIENT_REFUSED, not retried."""
    spec = RecipientChannel.of("s3", f"s3://absent-{uuid.uuid4().hex[:12]}/x")
    channel = open_channel(spec, s3=_access(moto_endpoint), limits=FAST)
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_REFUSED, False)


def test_s3_outage_is_retryable_and_a_later_attempt_writes_each_object_once() -> None:
    """The recipient's S3 down: one try per object, RECIPIENT_UNREACHABLE (retryable); back on
    its port, the next attempt delivers, one version of each object."""
    from moto.server import ThreadedMotoServer

    port = _free_port()
    first = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    first.start()
    endpoint = f"http://127.0.0.1:{port}"
    bucket, client = _bucket(endpoint)
    first.stop()  # the outage: nothing listens (moto keeps the bucket in this process)
    channel = open_channel(
        RecipientChannel.of("s3", f"s3://{bucket}/inbox"), s3=_access(endpoint), limits=FAST
    )
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)
    back = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    back.start()
    try:
        assert channel.deliver(_packet()).already_delivered is False
        versions = client.list_object_versions(Bucket=bucket)["Versions"]
    finally:
        back.stop()
    assert sorted(v["Key"] for v in versions) == [
        f"inbox/rel-0001/{n}" for n in ("manifest.json", "notes.txt", "release.pdf")
    ]


# --- HTTP(S) push to a local recipient ------------------------------------------


class _Recipient:
    """Keeps one packet per Idempotency-Key; a repeat key gets 409 naming the held hash."""

    def __init__(self, port: int = 0, tls: ssl.SSLContext | None = None) -> None:
        self.packets: dict[str, tuple[str, bytes]] = {}
        self.posts = 0
        self.fail_after_store = 0  # answer 500 this many times, after storing
        self.forced: int | None = None  # answer this status to everything
        self.answers: list[bytes] = []
        self._lock = threading.Lock()
        self.port, self._tls = port, tls
        self.server: ThreadingHTTPServer | None = None

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/inbox?token=t0k"

    def start(self) -> _Recipient:
        """Bind and serve; until then the port refuses connections, as a down recipient's does."""
        handler = type("Handler", (_Handler,), {"recipient": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        if self._tls is not None:
            self.server.socket = self._tls.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        kwargs = {"poll_interval": 0.05}
        threading.Thread(target=self.server.serve_forever, kwargs=kwargs, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def receive(self, key: str, claimed: str, body: bytes) -> tuple[int, bytes, str | None]:
        with self._lock:
            self.posts += 1
            if self.forced is not None:
                return self.forced, b"no", None
            if key in self.packets:
                return 409, b'{"duplicate":true}', self.packets[key][0]
            manifest = zipfile.ZipFile(io.BytesIO(body)).read(MANIFEST_NAME)
            if _sha(manifest) != claimed:
                return 400, b"hash mismatch", None
            self.packets[key] = (claimed, body)
            if self.fail_after_store > 0:
                self.fail_after_store -= 1
                return 500, b"stored, then failed", None
            answer = json.dumps({"received": key, "at": time.time()}).encode()
            self.answers.append(answer)
            return 200, answer, None


class _Handler(BaseHTTPRequestHandler):
    recipient: _Recipient
    timeout = 5  # a stalled client cannot hold a server thread for long

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(min(length, 16 << 20))
        key, claimed = self.headers["Idempotency-Key"], self.headers["Custody-Packet-Sha256"]
        status, answer, held = self.recipient.receive(key, claimed, body)
        self.send_response(status)
        if held:
            self.send_header("Custody-Packet-Sha256", held)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def recipients() -> Iterator[Callable[..., _Recipient]]:
    made: list[_Recipient] = []

    def make(port: int = 0, tls: ssl.SSLContext | None = None) -> _Recipient:
        made.append(_Recipient(port, tls))
        return made[-1]

    yield make
    for recipient in made:
        recipient.stop()


def _push(url: str, limits: AttemptLimits = FAST, ca_file: str | None = None) -> Any:
    return open_channel(RecipientChannel.of("https", url), ca_file=ca_file, limits=limits)


def test_https_delivers_packet_and_hashes_the_answer(
    recipients: Callable[..., _Recipient],
) -> None:
    """One POST carries the files and manifest; the receipt holds the answer's SHA-256."""
    recipient, packet = recipients().start(), _packet()
    delivery = _push(recipient.url()).deliver(packet)
    assert (delivery.status, delivery.already_delivered, recipient.posts) == (200, False, 1)
    assert delivery.answer_sha256 == _sha(recipient.answers[0])
    assert delivery.location == f"http://127.0.0.1:{recipient.port}/inbox"
    archive = zipfile.ZipFile(io.BytesIO(recipient.packets[packet.release_id][1]))
    assert archive.namelist() == ["notes.txt", "release.pdf", MANIFEST_NAME]
    assert archive.read("notes.txt") == SECRET_TEXT


def test_https_recipient_down_is_retryable_and_a_later_attempt_delivers(
    recipients: Callable[..., _Recipient],
) -> None:
    """Down: one try, RECIPIENT_UNREACHABLE (retryable); once up, the next attempt delivers."""
    recipient = recipients(port=_free_port())  # nothing listens until start()
    channel = _push(recipient.url())
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)
    recipient.start()
    delivery = channel.deliver(_packet())
    assert delivery.status == 200 and (recipient.posts, len(recipient.packets)) == (1, 1)


def test_https_retry_after_500_does_not_store_twice(recipients: Callable[..., _Recipient]) -> None:
    """A 500 after the recipient stored the packet: the next attempt is told 409, same hash."""
    recipient = recipients().start()
    recipient.fail_after_store = 1
    channel = _push(recipient.url())
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)
    delivery = channel.deliver(_packet())
    assert (delivery.status, delivery.already_delivered) == (409, True)
    assert (recipient.posts, len(recipient.packets)) == (2, 1)


def test_https_tries_once_per_attempt() -> None:
    """Nothing listening: one try, no wait inside the attempt; retrying is Temporal's."""
    started = time.monotonic()
    with pytest.raises(DeliveryFailed) as info:
        _push(f"http://127.0.0.1:{_free_port()}/in").deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)
    assert info.value.detail == "ConnectionRefusedError"
    assert time.monotonic() - started < 0.5


def test_https_deadline_bounds_a_silent_recipient() -> None:
    """A recipient that takes the connection and never answers: retryable, within the deadline."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # connections queue in the backlog; nothing ever reads them
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/in"
        started = time.monotonic()
        with pytest.raises(DeliveryFailed) as info:
            _push(url, AttemptLimits(request_timeout_s=30, deadline_s=0.3)).deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_UNREACHABLE, True)
    assert time.monotonic() - started < 1.5


def test_https_400_is_refused_without_retry(recipients: Callable[..., _Recipient]) -> None:
    """A 400 is permanent: RECIPIENT_REFUSED, not retryable, sent once."""
    recipient = recipients().start()
    recipient.forced = 400
    with pytest.raises(DeliveryFailed) as info:
        _push(recipient.url()).deliver(_packet())
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_REFUSED, False)
    assert recipient.posts == 1


def test_https_other_packet_under_same_release_is_conflict(
    recipients: Callable[..., _Recipient],
) -> None:
    """A 409 naming another packet hash is DELIVERY_CONFLICT; the first packet stays."""
    recipient = recipients().start()
    channel = _push(recipient.url())
    channel.deliver(_packet())
    with pytest.raises(DeliveryFailed) as info:
        channel.deliver(_packet(text=b"other text"))
    assert (info.value.code, info.value.retryable) == (Code.DELIVERY_CONFLICT, False)
    assert recipient.packets["rel-0001"][0] == _packet().sha256


def test_packet_zip_is_deterministic() -> None:
    """Two builds of one packet are the same bytes, so a body hash means something."""
    assert packet_zip(_packet()) == packet_zip(_packet())
    assert packet_zip(_packet()) != packet_zip(_packet(text=b"other"))


# --- real TLS with a private CA -----------------------------------------------------


def test_https_over_tls_with_private_ca(
    recipients: Callable[..., _Recipient], tmp_path: Path
) -> None:
    """Real TLS: trusted with the CA file, RECIPIENT_REFUSED (not retried) without it."""
    context, ca_file = server_context(tmp_path, x509.IPAddress(IPv4Address("127.0.0.1")))
    recipient = recipients(tls=context).start()
    delivery = _push(recipient.url("https"), ca_file=ca_file).deliver(_packet())
    assert delivery.status == 200 and delivery.location.startswith("https://127.0.0.1:")
    with pytest.raises(DeliveryFailed) as info:
        _push(recipient.url("https")).deliver(_packet("rel-0002"))
    assert (info.value.code, info.value.retryable) == (Code.RECIPIENT_REFUSED, False)
    assert recipient.posts == 1
