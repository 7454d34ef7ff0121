"""TLS, mTLS and API-key settings for the one Temporal connection (starter.client.connect).

The ``temporal`` dev server has no TLS flags, so the real-connection tests put
a TLS-terminating proxy (Python's ``ssl``, the test's own CA) in front of it:
the client speaks TLS 1.3 with ALPN h2 to the proxy, which forwards plaintext.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pydantic import SecretStr, ValidationError
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

from custody.errors import ConfigurationError
from custody.keys.keyring import init_keyring
from custody.settings import Settings
from custody.temporal import connect_temporal, tls_config

SERVER_NAME = "temporal.custody.test"


Issuer = tuple[x509.Certificate, ec.EllipticCurvePrivateKey]


def _cert(path: Path, name: str, issuer: Issuer | None, usage: x509.ObjectIdentifier) -> Issuer:
    """A P-256 certificate for ``name`` (a CA when ``issuer`` is None), written as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is not None:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False
        ).add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    path.with_suffix(".crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    path.with_suffix(".key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    """A CA, a server certificate for SERVER_NAME and a client certificate, under tmp_path."""
    ca = _cert(tmp_path / "ca", "custody test CA", None, ExtendedKeyUsageOID.SERVER_AUTH)
    _cert(tmp_path / "server", SERVER_NAME, ca, ExtendedKeyUsageOID.SERVER_AUTH)
    _cert(tmp_path / "client", "custody-worker", ca, ExtendedKeyUsageOID.CLIENT_AUTH)
    return tmp_path


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


@pytest.fixture
async def tls_proxy(pki: Path, temporal_address: str) -> AsyncIterator[str]:
    """An mTLS listener in front of the dev server: client certificates from the test CA only."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=pki / "ca.crt")
    ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.set_alpn_protocols(["h2"])
    host, port = temporal_address.rsplit(":", 1)

    async def serve(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(host, int(port))
        await asyncio.gather(_pipe(client_r, up_w), _pipe(up_r, client_w))

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ctx)
    try:
        yield f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()


def _settings(pki: Path, address: str = "localhost:7233", *, cert: bool = True) -> Settings:
    return Settings(
        home=pki,
        temporal_address=address,
        temporal_tls_ca_file=pki / "ca.crt",
        temporal_tls_cert_file=pki / "client.crt" if cert else None,
        temporal_tls_key_file=pki / "client.key" if cert else None,
        temporal_tls_server_name=SERVER_NAME,
    )


def test_tls_config_reads_files_and_server_name(pki: Path) -> None:
    """The CA, client certificate and key are read from their files; the server name is the SNI."""
    tls = tls_config(_settings(pki))
    assert tls is not None and tls.domain == SERVER_NAME
    assert tls.server_root_ca_cert == (pki / "ca.crt").read_bytes()
    assert tls.client_cert == (pki / "client.crt").read_bytes()
    assert tls.client_private_key == (pki / "client.key").read_bytes()


def test_tls_config_off_unless_asked(tmp_path: Path) -> None:
    """No TLS setting means no TLS config; CUSTODY_TEMPORAL_TLS alone means system roots."""
    assert tls_config(Settings(home=tmp_path)) is None
    tls = tls_config(Settings(home=tmp_path, temporal_tls=True))
    assert tls is not None and tls.server_root_ca_cert is None and tls.client_cert is None


def test_tls_settings_cert_without_key_refused(pki: Path) -> None:
    """A client certificate without its key (or the reverse) fails at start-up."""
    with pytest.raises(ValidationError, match="go together"):
        Settings(home=pki, temporal_tls_cert_file=pki / "client.crt")


async def test_tls_api_key_is_a_secret_sent_by_the_client(pki: Path, tls_proxy: str) -> None:
    """CUSTODY_TEMPORAL_API_KEY is hidden in the settings' repr and given to the client."""
    settings = _settings(pki, tls_proxy).model_copy(
        update={"temporal_api_key": SecretStr("tmprl-key-123")}
    )
    assert "tmprl-key-123" not in repr(settings)
    client = await connect_temporal(settings)
    assert client.api_key == "tmprl-key-123"


async def test_tls_mtls_connection_to_temporal(pki: Path, tls_proxy: str) -> None:
    """connect_temporal reaches Temporal over mTLS, verifying the server by its name."""
    client = await connect_temporal(_settings(pki, tls_proxy))
    info = await client.workflow_service.get_system_info(GetSystemInfoRequest())
    assert info.capabilities.signal_and_query_header


async def test_tls_without_client_cert_is_refused(pki: Path, tls_proxy: str) -> None:
    """Without the client certificate the mTLS listener refuses the connection: in TLS 1.3
    the client may finish its handshake first, so the refusal arrives either as the
    handshake's transport error or as the connection closed on the first call."""
    with pytest.raises(RuntimeError, match="transport error|connection closed"):
        await asyncio.wait_for(connect_temporal(_settings(pki, tls_proxy, cert=False)), 60)


async def test_tls_wrong_server_name_is_refused(pki: Path, tls_proxy: str) -> None:
    """A server certificate that does not carry the configured name fails verification."""
    settings = _settings(pki, tls_proxy).model_copy(
        update={"temporal_tls_server_name": "other.custody.test"}
    )
    with pytest.raises(RuntimeError, match="InvalidCertificate"):
        await asyncio.wait_for(connect_temporal(settings), 60)


async def test_tls_production_refuses_plaintext_to_temporal(tmp_path: Path) -> None:
    """Production with no TLS setting and no API key: refused before any dial."""
    settings = Settings(home=tmp_path, env="production", temporal_address="127.0.0.1:1")
    with pytest.raises(ConfigurationError) as info:
        await connect_temporal(settings)
    assert info.value.code == "CONFIGURATION" and "plaintext" in info.value.detail


async def test_tls_production_connects_over_mtls(pki: Path, tls_proxy: str) -> None:
    """Production with the TLS settings reaches Temporal through the mTLS listener."""
    init_keyring(pki / "keys", development=False)  # production's codec needs its keys
    settings = _settings(pki, tls_proxy).model_copy(update={"env": "production"})
    client = await connect_temporal(settings)
    info = await client.workflow_service.get_system_info(GetSystemInfoRequest())
    assert info.capabilities.signal_and_query_header
