"""C2PA provenance for released files: sign each file for its release, read it back anywhere.

Every delivered file (the watermarked PDF, page PNGs) carries a C2PA manifest
signed offline with Ed25519. Besides the ``c2pa.created`` action that C2PA
requires first, it holds one custom assertion, ``org.custody.egress``, with
the :class:`EgressClaim`: release id, recipient handle, policy name and hash,
the source documents' hashes, the tenant. Nothing of the page content goes in:
the C2PA thumbnail is off, and no ingredient is attached.

C2PA needs an X.509 chain: :func:`ensure_chain` makes a development one (a
private Ed25519 CA and an Ed25519 leaf) or loads the operator's. Verifiers pin
the CA by its SHA-256 (:attr:`C2paCredentials.ca_sha256`) and pass it to
:func:`read_claim` as the trust anchor; the file never supplies its own.

:func:`read_claim` answers ``custody egress identify``: which release a file
came from, whether its bytes are still the signed ones (``intact``), and
whether the signer chains to the pinned Custody CA (``trusted``). C2PA
settings (:func:`c2pa_settings`) forbid every network fetch: OCSP, remote
manifests, timestamp authorities.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import c2pa
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from activities.egress import c2pa_certs as certs
from custody import egress as eg
from custody.canonical import canonical_json
from custody.errors import (
    ProvenanceInvalid,
    SigningFailed,
    SigningKeyInvalid,
    SigningKeyMissing,
    UnsupportedMedia,
)

# --- claim ------------------------------------------------------------------

ASSERTION_LABEL = "org.custody.egress"  # a v2 shape gets a new label: org.custody.egress.v2
MEDIA_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/tiff")
_MAGIC = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)
_SHA256 = r"^[0-9a-f]{64}$"
# Failures about who signed and when, not about the bytes: they clear ``trusted``.
_TRUST_PREFIXES = ("signingCredential.", "timeStamp.", "claimSignature.outsideValidity")
_CODE = re.compile(r"\b(?:[a-z][A-Za-z]*\.)+[a-z][A-Za-z]*\b")


class EgressClaim(BaseModel):
    """What a released file says about itself: identifiers and hashes, never names or text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release_id: str
    recipient: str  # a registered handle such as ``clinic-b``
    policy_name: str
    policy_sha256: str = Field(pattern=_SHA256)
    source_sha256s: list[str] = Field(min_length=1)
    tenant: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")

    @field_validator("release_id")
    @classmethod
    def _release_id(cls, value: str) -> str:
        return eg.check_release_id(value)

    @field_validator("recipient", "policy_name")
    @classmethod
    def _handle(cls, value: str) -> str:
        return eg.check_name(value)

    @field_validator("source_sha256s")
    @classmethod
    def _hashes(cls, value: list[str]) -> list[str]:
        if not all(re.match(_SHA256, h) for h in value):
            raise ValueError("source hashes must be lower-case hex SHA-256")
        return value


class ProvenanceReading(BaseModel):
    """What :func:`read_claim` found in one file."""

    model_config = ConfigDict(frozen=True)

    claim: EgressClaim
    # The signed content holds: c2pa reports no hash or signature failure. The
    # manifest's own box headers are not covered, so "byte-identical" means
    # comparing ``sha256`` with the release's receipt as well.
    intact: bool
    sha256: str  # of the bytes read
    trusted: bool  # the signer chains to one of the given anchors and is in its validity
    codes: tuple[str, ...]  # c2pa failure codes, e.g. assertion.dataHash.mismatch
    signer_sha256: str | None  # SHA-256 of the leaf certificate's DER, when found
    anchor_sha256: str | None  # the anchor that issued the leaf, when one did
    #: The active manifest's label (a URN) and the SHA-256 of its canonical JSON
    #: (assertions, claim and signature info as c2pa reads them): what a receipt names.
    manifest_label: str = ""
    manifest_sha256: str = ""

    @property
    def verified(self) -> bool:
        return self.intact and self.trusted


# --- signing chain ------------------------------------------------------------

_CHAIN_FILES = ("signer.pem", "signer.key", "ca.pem")


@dataclass(frozen=True)
class C2paCredentials:
    """A leaf certificate and its Ed25519 key, with the CA that issued it."""

    chain_pem: bytes  # leaf then CA: what c2pa embeds in each manifest
    ca_pem: bytes
    key_pem: bytes = field(repr=False)
    ca_sha256: str  # what verifiers pin
    signer_sha256: str

    @classmethod
    def from_pem(cls, signer_pem: bytes, key_pem: bytes, ca_pem: bytes) -> C2paCredentials:
        """Hold the chain once the key, the leaf and the CA are shown to belong together."""
        try:
            leaf, ca = certs.check_pair(signer_pem, key_pem, ca_pem)
        except ValueError as exc:
            raise SigningKeyInvalid(str(exc)) from None
        return cls(
            chain_pem=leaf.public_bytes(certs.PEM) + ca.public_bytes(certs.PEM),
            ca_pem=ca.public_bytes(certs.PEM),
            key_pem=key_pem,
            ca_sha256=certs.sha256_der(ca),
            signer_sha256=certs.sha256_der(leaf),
        )


def ensure_chain(directory: Path, *, production: bool) -> C2paCredentials:
    """The chain under ``directory``; in development it is created first when absent.

    Files: ``signer.pem``, ``signer.key`` (PKCS#8), ``ca.pem``, each 0600 in a
    0700 folder. A partial set is an error, never regenerated: verifiers have
    pinned the old CA. The development CA's private key is never written.
    """
    paths = [directory / name for name in _CHAIN_FILES]
    if not any(p.exists() for p in paths):
        if production:
            raise SigningKeyMissing("no C2PA chain configured; production never creates one")
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
        for path, pem in zip(paths, certs.issue_dev_chain(), strict=True):
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(pem)
    if not all(p.exists() for p in paths):
        raise SigningKeyMissing("the C2PA chain directory is incomplete; restore it")
    if paths[1].stat().st_mode & 0o077:
        raise SigningKeyInvalid(f"{_CHAIN_FILES[1]} is readable by group or others")
    return C2paCredentials.from_pem(*(p.read_bytes() for p in paths))


# --- c2pa -------------------------------------------------------------------


def c2pa_settings(trust_anchor_pem: str) -> dict[str, Any]:
    """The one c2pa configuration, for signing and reading: offline, no thumbnail."""
    return {
        "version": 1,
        "trust": {"user_anchors": trust_anchor_pem},
        "verify": {
            "verify_after_sign": True,
            "verify_after_reading": True,
            "verify_trust": True,
            "verify_timestamp_trust": False,
            "ocsp_fetch": False,
            "remote_manifest_fetch": False,
        },
        "builder": {"thumbnail": {"enabled": False}},
    }


def _manifest_definition(claim: EgressClaim) -> dict[str, Any]:
    try:
        version = metadata.version("custody")
    except metadata.PackageNotFoundError:
        version = "0"
    created = {
        "action": "c2pa.created",
        "digitalSourceType": "http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture",
        "softwareAgent": {"name": "custody", "version": version},
    }
    return {
        "claim_generator_info": [{"name": "custody", "version": version}],
        "assertions": [
            {"label": "c2pa.actions.v2", "data": {"actions": [created]}},
            {"label": ASSERTION_LABEL, "data": claim.model_dump(mode="json")},
        ],
    }


def _codes(error: Exception) -> str:
    """Only the validation codes from a c2pa message: never file content."""
    found = sorted(set(_CODE.findall(str(error))))
    return f"{type(error).__name__.lstrip('_')} {' '.join(found)}".strip()


def sign_file(data: bytes, media_type: str, claim: EgressClaim, creds: C2paCredentials) -> bytes:
    """``data`` with an embedded C2PA manifest carrying ``claim``, signed with ``creds``."""
    if media_type not in MEDIA_TYPES:
        raise UnsupportedMedia(media_type[:64])
    # from_info, not from_callback: a callback signer reserves ~11 KB for the
    # signature where a local Ed25519 one needs ~2 KB (manifest 3.2 vs 12.5 KB).
    info = c2pa.C2paSignerInfo(c2pa.C2paSigningAlg.ED25519, creds.chain_pem, creds.key_pem, None)
    out = io.BytesIO()
    try:
        with (
            c2pa.Context.from_dict(c2pa_settings(creds.ca_pem.decode())) as context,
            c2pa.Signer.from_info(info) as signer,
            c2pa.Builder(_manifest_definition(claim), context=context) as builder,
        ):
            builder.sign(signer, media_type, io.BytesIO(data), out)
    except c2pa.C2paError as exc:
        raise SigningFailed(_codes(exc)) from None
    return out.getvalue()


def sniff_media_type(data: bytes) -> str:
    """The media type from the file's first bytes; UNSUPPORTED_TYPE otherwise."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    raise UnsupportedMedia("not PDF, PNG, JPEG or TIFF by its first bytes")


def read_claim(
    data: bytes, media_type: str | None, trust_anchor_pem: bytes
) -> ProvenanceReading | None:
    """The Custody claim in ``data`` and how far it holds; None without a Custody manifest.

    ``trust_anchor_pem`` is the pinned Custody CA (one or more certificates):
    the verifier supplies it, the file never does.
    """
    media_type = media_type or sniff_media_type(data)
    if media_type not in MEDIA_TYPES:
        raise UnsupportedMedia(media_type[:64])
    try:
        with c2pa.Context.from_dict(c2pa_settings(trust_anchor_pem.decode())) as context:
            reader = c2pa.Reader.try_create(media_type, io.BytesIO(data), None, context)
            if reader is None:
                return None
            with reader:
                store = json.loads(reader.json())
    except c2pa.C2paError as exc:
        raise ProvenanceInvalid(_codes(exc)) from None
    return _reading(store, data, trust_anchor_pem)


def _reading(store: dict[str, Any], data: bytes, anchors_pem: bytes) -> ProvenanceReading | None:
    manifest = store.get("manifests", {}).get(store.get("active_manifest"), {})
    found = [a["data"] for a in manifest.get("assertions", []) if a.get("label") == ASSERTION_LABEL]
    if not found:
        return None
    try:
        claim = EgressClaim.model_validate(found[0])
    except ValidationError:
        raise ProvenanceInvalid(f"{ASSERTION_LABEL} does not parse") from None
    results = store.get("validation_results", {}).get("activeManifest", {})
    failures = tuple(sorted({f["code"] for f in results.get("failure", [])}))
    successes = {s["code"] for s in results.get("success", [])}
    trust_failed = any(code.startswith(_TRUST_PREFIXES) for code in failures)
    serial = str(manifest.get("signature_info", {}).get("cert_serial_number", ""))
    leaf = certs.find_certificate(data, int(serial)) if serial.isdigit() else None
    return ProvenanceReading(
        claim=claim,
        intact=all(code.startswith(_TRUST_PREFIXES) for code in failures),
        trusted="signingCredential.trusted" in successes and not trust_failed,
        codes=failures,
        sha256=hashlib.sha256(data).hexdigest(),
        signer_sha256=certs.sha256_der(leaf) if leaf else None,
        anchor_sha256=certs.issuing_anchor(leaf, anchors_pem) if leaf else None,
        manifest_label=str(store.get("active_manifest", "")),
        manifest_sha256=hashlib.sha256(canonical_json(manifest)).hexdigest(),
    )
