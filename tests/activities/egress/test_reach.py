"""Where a recipient's channel may go: the address policy, Custody's own storage, the outbox.

The rules run in production mode where a test says so, with a stand-in
resolver (a function answering fixed addresses for a name: no DNS is
reachable here, and a real one could not be made to rebind), and the tests
say so. Deliveries go to real local servers: an HTTPS recipient with a
certificate for a name only, signed by the test's own CA, and a recipient
that trickles its answer a byte at a time.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509

from activities.egress.addresses import vet_ip
from activities.egress.channels import AttemptLimits, Packet, PacketFile, RecipientChannel
from activities.egress.delivery import open_channel
from activities.egress.reach import Reach
from custody.errors import Code, DeliveryFailed, EgressRefused
from custody.settings import Settings
from tests.activities.egress.test_channels import _Recipient
from tests.tls import server_context

NAME = "files.custody.test"
PRODUCTION = Reach(production=True)


def _packet() -> Packet:
    return Packet("rel-0001", (PacketFile("release.pdf", b"%PDF-1.7\n%%EOF\n"),))


def _answers(table: dict[str, list[str]]) -> Reach:
    """Development rules with a stand-in resolver answering ``table`` (no DNS here)."""
    return Reach(resolver=lambda host, port: table.get(host, []))


def _refused(reach: Reach, kind: str, target: str, *, names: bool = True) -> str:
    with pytest.raises(EgressRefused) as info:
        reach.check(RecipientChannel.of(kind, target), resolve_names=names)
    assert target not in str(info.value)
    return str(info.value.code)


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::1", "loopback"),  # 6to4 around 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo around 127.0.0.1
        ("10.0.0.5", "private"),
        ("::ffff:10.0.0.5", "private"),
        ("169.254.169.254", "link_local"),
        ("100.64.0.10", "not global"),
        ("fd00::1", "private"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_reach_vet_ip_allows_public_unicast_only(address: str, why: str | None) -> None:
    """Each non-public address is named by the rule it breaks; public unicast passes."""
    assert vet_ip(ipaddress.ip_address(address)) == why


@pytest.mark.parametrize("reach", [Reach(), PRODUCTION], ids=["development", "production"])
@pytest.mark.parametrize(
    "target",
    [
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.5:9200/",
        "https://100.64.0.10/",
        "https://[fd00::1]/",
        "https://[::ffff:169.254.169.254]/",
        "https://0.0.0.0/",
        "https://metadata.google.internal/computeMetadata/v1/",
    ],
)
def test_reach_refuses_internal_addresses_in_every_environment(reach: Reach, target: str) -> None:
    """Metadata, private, CGNAT, ULA and mapped addresses: RECIPIENT_ADDRESS_REFUSED always."""
    assert _refused(reach, "https", target) == Code.RECIPIENT_ADDRESS_REFUSED


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:7233/",
        "http://[::1]:8234/codec/encode",
        "https://127.0.0.1/",
        "https://localhost/",
        "http://localhost:8080/in",
    ],
)
def test_reach_loopback_and_plain_http_only_in_development(target: str) -> None:
    """Production refuses loopback and http://; development keeps them for local servers."""
    Reach().check(RecipientChannel.of("https", target))
    assert _refused(PRODUCTION, "https", target) == Code.RECIPIENT_ADDRESS_REFUSED


def test_reach_vets_what_a_name_resolves_to_in_production() -> None:
    """Production mode, stand-in resolver: a name answering 127.0.0.1 or 10.x is refused."""
    table = {"inside.example.test": ["127.0.0.1"], "mixed.example.test": ["8.8.8.8", "10.0.0.1"]}
    reach = Reach(production=True, resolver=lambda host, port: table[host])
    for host in table:
        assert _refused(reach, "https", f"https://{host}/") == Code.RECIPIENT_ADDRESS_REFUSED


def test_reach_refuses_a_rebound_name_at_delivery() -> None:
    """Production mode, stand-in resolver: public at registration, loopback at delivery."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    reach = Reach(production=True, resolver=lambda host, port: next(answers))
    spec = RecipientChannel.of("https", "https://partner.example.test/in")
    reach.check(spec, resolve_names=True)  # what the name answered when it was registered
    with pytest.raises(EgressRefused) as info:
        open_channel(spec, reach=reach, limits=AttemptLimits(2, 5)).deliver(_packet())
    assert info.value.code == Code.RECIPIENT_ADDRESS_REFUSED


def test_reach_allowlist_admits_its_domains_and_their_subdomains_only() -> None:
    """With an operator's allowlist, other names and bare addresses are refused."""
    reach = Reach(allowed_domains=("partner.example",), resolver=lambda h, p: ["93.184.216.34"])
    for ok in ("https://partner.example/in", "https://files.partner.example/in"):
        reach.check(RecipientChannel.of("https", ok), resolve_names=True)
    for target in ("https://evilpartner.example/", "https://93.184.216.34/"):
        assert _refused(reach, "https", target) == Code.RECIPIENT_ADDRESS_REFUSED


def test_reach_refuses_custodys_own_buckets_and_prefixes() -> None:
    """The store's bucket and prefix and the witness bucket: RECIPIENT_BUCKET_RESERVED."""
    settings = Settings(
        store="s3",
        s3_bucket="custody-evidence",
        s3_prefix="prod/",
        witness_s3_bucket="custody-witness",
    )
    reach = Reach.of(settings)
    for target in (
        "s3://custody-witness/ledger/clinic-b",
        "s3://custody-evidence",
        "s3://custody-evidence/prod/outbound",
    ):
        assert _refused(reach, "s3", target) == Code.RECIPIENT_BUCKET_RESERVED
    for target in ("s3://custody-evidence/partners/clinic-b", "s3://clinic-b-inbox/custody"):
        reach.check(RecipientChannel.of("s3", target))


def test_reach_outbox_production_root_symlinks_and_custodys_folders(tmp_path: Path) -> None:
    """Outbox: refused in production without a root, confined to it, never via a symlink,
    never into Custody's own objects folder."""
    settings = Settings(home=tmp_path / "home")
    dev = Reach.of(settings)
    assert (
        _refused(dev, "outbox", str(settings.objects_dir / "x")) == Code.RECIPIENT_BUCKET_RESERVED
    )
    root = tmp_path / "outboxes"
    (root / "real").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path / "home")
    assert _refused(PRODUCTION, "outbox", str(root / "real")) == Code.RECIPIENT_ADDRESS_REFUSED
    confined = Reach(production=True, outbox_root=root)
    confined.check(RecipientChannel.of("outbox", str(root / "real")))
    for target in (tmp_path / "elsewhere", root / "link" / "objects"):
        assert _refused(confined, "outbox", str(target)) == Code.RECIPIENT_ADDRESS_REFUSED


def test_reach_outbox_refuses_a_symlink_planted_in_it(tmp_path: Path) -> None:
    """A release folder made a symlink (to the keys, say) is refused at delivery, not followed."""
    outbox, keys = tmp_path / "outbox", tmp_path / "keys"
    outbox.mkdir()
    keys.mkdir()
    (outbox / "rel-0001").symlink_to(keys)
    with pytest.raises(DeliveryFailed) as info:
        open_channel(RecipientChannel.of("outbox", str(outbox))).deliver(_packet())
    assert info.value.code == Code.RECIPIENT_ADDRESS_REFUSED
    assert list(keys.iterdir()) == []


# --- a real HTTPS recipient known by name only ---------------------------------------


@pytest.fixture
def named_recipient(tmp_path: Path) -> Iterator[tuple[_Recipient, str, list[str]]]:
    """A TLS recipient on 127.0.0.1 whose certificate names only NAME; the SNI names it saw."""
    context, ca_file = server_context(tmp_path, x509.DNSName(NAME))  # the name alone
    seen: list[str] = []
    context.sni_callback = lambda sock, server_name, ctx: seen.append(str(server_name)) and None
    recipient = _Recipient(tls=context).start()
    yield recipient, ca_file, seen
    recipient.stop()


def test_reach_https_connects_to_the_vetted_address_with_sni_for_the_name(
    named_recipient: tuple[_Recipient, str, list[str]],
) -> None:
    """Stand-in resolver, real TLS: the name goes in SNI and the certificate check, the
    connection to its vetted address; a name the certificate does not carry is refused."""
    recipient, ca_file, seen = named_recipient
    reach = _answers({NAME: ["127.0.0.1"], "evil.custody.test": ["127.0.0.1"]})
    url = f"https://{NAME}:{recipient.port}/inbox"
    got = open_channel(RecipientChannel.of("https", url), ca_file=ca_file, reach=reach).deliver(
        _packet()
    )
    assert got.status == 200 and seen == [NAME] and recipient.posts == 1
    evil = f"https://evil.custody.test:{recipient.port}/inbox"
    with pytest.raises(DeliveryFailed) as info:
        open_channel(RecipientChannel.of("https", evil), ca_file=ca_file, reach=reach).deliver(
            _packet()
        )
    assert (info.value.code, recipient.posts) == (Code.RECIPIENT_REFUSED, 1)


def test_reach_https_attempt_ends_at_its_deadline_however_slowly_bytes_trickle() -> None:
    """A recipient answering one byte every 0.2 s (each read well inside its timeout)
    is cut off at the attempt's wall-clock deadline, not after its whole answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(1 << 20)
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100:
                if stop.wait(0.2):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    threading.Thread(target=trickle, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/in"
    started = time.monotonic()
    try:
        with pytest.raises(DeliveryFailed) as info:
            limits = AttemptLimits(request_timeout_s=5, deadline_s=1)
            open_channel(RecipientChannel.of("https", url), limits=limits).deliver(_packet())
    finally:
        stop.set()
        listener.close()
    assert (info.value.code, info.value.detail) == (Code.RECIPIENT_UNREACHABLE, "deadline passed")
    assert time.monotonic() - started < 3  # the whole answer would take about 28 s


def test_reach_from_settings_reserves_custodys_folders(tmp_path: Path) -> None:
    """The local store's objects, keys, signing and staging folders are all reserved."""
    settings = Settings(home=tmp_path, witness_dir=tmp_path / "witness")
    reach = Reach.of(settings)
    for folder in (settings.objects_dir, tmp_path / "keys", settings.signing_path,
                   settings.staging_path, tmp_path / "witness"):  # fmt: skip
        target = str(folder / "outbox")
        assert _refused(reach, "outbox", target) == Code.RECIPIENT_BUCKET_RESERVED
    reach.check(RecipientChannel.of("outbox", str(tmp_path / "outbox")))
    assert os.path.realpath(tmp_path) == str(tmp_path)  # the test's own paths are not links
