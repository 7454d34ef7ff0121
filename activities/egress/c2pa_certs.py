"""X.509 for C2PA signing: a development chain, pairing checks, and finding the signer.

Pure ``cryptography`` work with no Custody errors, so :mod:`.provenance` can
wrap what goes wrong in its own codes. The leaf is shaped as c2pa requires:
Ed25519, digitalSignature key usage, an accepted extended key usage, subject
and authority key identifiers, issued by a CA that is only a trust anchor.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PEM = serialization.Encoding.PEM
# documentSigning names the purpose, but c2pa 0.91's default trust configuration
# accepts only emailProtection (measured: documentSigning alone fails "certificate
# missing required EKU"), so the leaf carries both and other verifiers accept it.
LEAF_EKUS = [x509.ObjectIdentifier("1.3.6.1.5.5.7.3.36"), ExtendedKeyUsageOID.EMAIL_PROTECTION]
_BAD_CERT = (ValueError, TypeError, InvalidSignature)


def sha256_der(cert: x509.Certificate) -> str:
    """The certificate's SHA-256 fingerprint (of its DER), lower-case hex."""
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def check_pair(signer_pem: bytes, key_pem: bytes, ca_pem: bytes) -> tuple[x509.Certificate, ...]:
    """(leaf, CA) once the key is Ed25519, matches the leaf, and the CA issued it.

    Raises ValueError naming which of those failed, never the key material.
    """
    try:
        leaf, ca = (
            x509.load_pem_x509_certificate(signer_pem),
            x509.load_pem_x509_certificate(ca_pem),
        )
        key = serialization.load_pem_private_key(key_pem, password=None)
        leaf.verify_directly_issued_by(ca)
    except _BAD_CERT:
        raise ValueError("chain does not parse or the CA did not issue the leaf") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ValueError("the signing key is not Ed25519")
    if key.public_key() != leaf.public_key():
        raise ValueError("the signing key does not match the leaf certificate")
    return leaf, ca


def issue_dev_chain() -> tuple[bytes, bytes, bytes]:
    """(leaf PEM, PKCS#8 key PEM, CA PEM), freshly made. The CA's key is dropped here."""
    ca_key, leaf_key = ed25519.Ed25519PrivateKey.generate(), ed25519.Ed25519PrivateKey.generate()
    ca_name = _name("Custody development C2PA CA")
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    aki = x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski)
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), days=3650)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(key_cert_sign=True, crl_sign=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .add_extension(aki, critical=False)
        .sign(ca_key, None)
    )
    leaf_ski = x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key())
    leaf = (
        _builder(_name("Custody egress signer"), ca_name, leaf_key.public_key(), days=730)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage(LEAF_EKUS), critical=False)
        .add_extension(leaf_ski, critical=False)
        .add_extension(aki, critical=False)
        .sign(ca_key, None)
    )
    pkcs8 = serialization.PrivateFormat.PKCS8
    key = leaf_key.private_bytes(PEM, pkcs8, serialization.NoEncryption())
    return leaf.public_bytes(PEM), key, ca.public_bytes(PEM)


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Custody"),
        ]
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ed25519.Ed25519PublicKey, *, days: int
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
    )


def _usage(
    *, digital_signature: bool = False, key_cert_sign: bool = False, crl_sign: bool = False
) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=key_cert_sign,
        crl_sign=crl_sign,
        encipher_only=False,
        decipher_only=False,
    )


def find_certificate(data: bytes, serial: int) -> x509.Certificate | None:
    """The certificate with this serial embedded in ``data`` (a manifest's COSE x5chain).

    c2pa reports the signer's serial but not its certificate, so find the DER
    INTEGER of the serial and parse the certificate around it: SEQUENCE,
    SEQUENCE (tbs), [0] version, then the serial, 9 to 16 bytes in.
    """
    content = serial.to_bytes(serial.bit_length() // 8 + 1, "big")
    needle = bytes([0x02, len(content)]) + content
    at = data.find(needle)
    while at >= 0:
        for start in range(max(at - 16, 0), at - 8):
            cert = _der_certificate(data, start)
            if cert is not None and cert.serial_number == serial:
                return cert
        at = data.find(needle, at + 1)
    return None


def _der_certificate(data: bytes, start: int) -> x509.Certificate | None:
    if data[start : start + 2] != b"\x30\x82":  # SEQUENCE with a two-byte length
        return None
    end = start + 4 + int.from_bytes(data[start + 2 : start + 4], "big")
    try:
        return x509.load_der_x509_certificate(data[start:end])
    except ValueError:
        return None


def issuing_anchor(leaf: x509.Certificate, anchors_pem: bytes) -> str | None:
    """The fingerprint of the anchor in ``anchors_pem`` that signed ``leaf``, if any."""
    for anchor in x509.load_pem_x509_certificates(anchors_pem):
        try:
            leaf.verify_directly_issued_by(anchor)
        except _BAD_CERT:
            continue
        return sha256_der(anchor)
    return None
