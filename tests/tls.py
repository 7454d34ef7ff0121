"""A private CA and a server certificate it signed, for tests of real TLS recipients.

One builder serves every TLS test: the certificate carries what a strict verifier
asks of a chain (key identifiers, the CA's key usage), so a test that fails does
so for the reason it tests, not for a thin certificate.
"""

from __future__ import annotations

import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_CA = "custody test CA"


def server_context(folder: Path, san: x509.GeneralName) -> tuple[ssl.SSLContext, str]:
    """A CA and a server certificate for ``san`` alone; the server context and the CA file."""
    ca_key, leaf_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca = _cert(_CA, ca_key, ca_key, None)
    leaf = _cert(_CA.replace("CA", "server"), leaf_key, ca_key, san)
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (folder / "leaf.key").write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "leaf.pem", folder / "leaf.key")
    return context, str(folder / "ca.pem")


def _cert(subject: str, key: Any, signer: Any, san: x509.GeneralName | None) -> x509.Certificate:
    """The CA's own certificate when ``san`` is None, else a server's for ``san``."""
    now, ca = datetime.now(UTC), san is None
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(_CA))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), False
        )
    )
    if san is None:
        usage = x509.KeyUsage(True, False, False, False, False, True, True, False, False)
        builder = builder.add_extension(usage, critical=True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([san]), critical=False
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])
