"""C2PA provenance on released files, with the real c2pa library and real corpus pages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import c2pa
import pytest
from PIL import Image
from pydantic import ValidationError

from activities.egress.provenance import (
    ASSERTION_LABEL,
    C2paCredentials,
    EgressClaim,
    c2pa_settings,
    ensure_chain,
    read_claim,
    sign_file,
)
from custody.errors import SigningKeyInvalid, SigningKeyMissing, UnsupportedMedia

CLAIM = EgressClaim(
    release_id="0123456789abcdef0123456789abcdef",
    recipient="clinic-b",
    policy_name="research-v1",
    policy_sha256="a" * 64,
    source_sha256s=["b" * 64, "c" * 64],
    tenant="acme",
)


@pytest.fixture(scope="module")
def creds(tmp_path_factory: pytest.TempPathFactory) -> C2paCredentials:
    return ensure_chain(tmp_path_factory.mktemp("c2pa") / "chain", production=False)


@pytest.fixture(scope="module")
def originals(corpus: Path) -> dict[str, bytes]:
    """One real scan in each supported container, and the corpus's real PDF."""
    page = Image.open(corpus / "ocr_gt" / "funsd_82092117.png")
    files = {"application/pdf": (corpus / "ocr_gt" / "funsdpdf_2pages_86220490_86328049.pdf")}
    out = {mt: path.read_bytes() for mt, path in files.items()}
    for media_type, fmt in (("image/png", "PNG"), ("image/jpeg", "JPEG"), ("image/tiff", "TIFF")):
        buf = io.BytesIO()
        page.save(buf, fmt)
        out[media_type] = buf.getvalue()
    return out


def test_ensure_chain_creates_private_files_and_reloads(tmp_path: Path) -> None:
    """Development creates 0600 files in a 0700 folder; a second call loads the same chain."""
    first = ensure_chain(tmp_path / "chain", production=False)
    assert (tmp_path / "chain").stat().st_mode & 0o777 == 0o700
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "chain").iterdir()}
    assert modes == {"signer.pem": 0o600, "signer.key": 0o600, "ca.pem": 0o600}
    again = ensure_chain(tmp_path / "chain", production=True)
    assert (again.ca_sha256, again.signer_sha256) == (first.ca_sha256, first.signer_sha256)
    assert "PRIVATE" not in repr(first)


def test_ensure_chain_production_never_creates(tmp_path: Path) -> None:
    """Production with no chain raises SIGNING_KEY_MISSING and writes nothing."""
    with pytest.raises(SigningKeyMissing) as caught:
        ensure_chain(tmp_path / "chain", production=True)
    assert caught.value.code == "SIGNING_KEY_MISSING"
    assert not (tmp_path / "chain").exists()


def test_ensure_chain_refuses_incomplete_or_exposed(tmp_path: Path) -> None:
    """A missing CA is SIGNING_KEY_MISSING (never regenerated); a world-readable key is invalid."""
    ensure_chain(tmp_path / "a", production=False)
    (tmp_path / "a" / "ca.pem").unlink()
    with pytest.raises(SigningKeyMissing):
        ensure_chain(tmp_path / "a", production=False)
    ensure_chain(tmp_path / "b", production=False)
    (tmp_path / "b" / "signer.key").chmod(0o644)
    with pytest.raises(SigningKeyInvalid):
        ensure_chain(tmp_path / "b", production=False)


def test_from_pem_refuses_a_key_from_another_chain(tmp_path: Path) -> None:
    """A leaf paired with someone else's key is SIGNING_KEY_INVALID."""
    ensure_chain(tmp_path / "a", production=False)
    ensure_chain(tmp_path / "b", production=False)
    leaf, key, ca = (
        tmp_path / "a" / "signer.pem",
        tmp_path / "b" / "signer.key",
        tmp_path / "a" / "ca.pem",
    )
    with pytest.raises(SigningKeyInvalid):
        C2paCredentials.from_pem(leaf.read_bytes(), key.read_bytes(), ca.read_bytes())


@pytest.mark.parametrize("media_type", ["application/pdf", "image/png", "image/jpeg", "image/tiff"])
def test_sign_file_round_trips_claim(
    creds: C2paCredentials, originals: dict[str, bytes], media_type: str
) -> None:
    """A signed file reads back (type sniffed) with its claim, intact, trusted, signer pinned."""
    signed = sign_file(originals[media_type], media_type, CLAIM, creds)
    reading = read_claim(signed, None, creds.ca_pem)
    assert reading is not None
    assert reading.claim == CLAIM
    assert reading.intact and reading.trusted and reading.verified and reading.codes == ()
    assert reading.signer_sha256 == creds.signer_sha256
    assert reading.anchor_sha256 == creds.ca_sha256


def test_sign_file_embeds_no_thumbnail_and_stays_small(
    creds: C2paCredentials, originals: dict[str, bytes]
) -> None:
    """No thumbnail resource or assertion is embedded; the manifest adds only a few KB."""
    signed = sign_file(originals["image/png"], "image/png", CLAIM, creds)
    context = c2pa.Context.from_dict(c2pa_settings(creds.ca_pem.decode()))
    with c2pa.Reader("image/png", io.BytesIO(signed), None, context) as reader:
        store = json.loads(reader.detailed_json())
    (manifest,) = store["manifests"].values()
    labels = {"c2pa.actions.v2", "c2pa.hash.data", ASSERTION_LABEL}
    assert set(manifest["assertion_store"]) == labels
    assert "thumbnail" not in json.dumps(store).lower()
    assert 1_000 < len(signed) - len(originals["image/png"]) < 8_000


@pytest.mark.parametrize("media_type", ["application/pdf", "image/png"])
def test_read_claim_flags_one_changed_byte(
    creds: C2paCredentials, originals: dict[str, bytes], media_type: str
) -> None:
    """One flipped byte of content reads back as not intact with assertion.dataHash.mismatch."""
    signed = bytearray(sign_file(originals[media_type], media_type, CLAIM, creds))
    signed[len(signed) // 2] ^= 0x01
    reading = read_claim(bytes(signed), media_type, creds.ca_pem)
    assert reading is not None and reading.claim == CLAIM
    assert not reading.intact and not reading.verified
    assert "assertion.dataHash.mismatch" in reading.codes


def test_read_claim_untrusted_signer_is_intact_but_not_trusted(
    creds: C2paCredentials, originals: dict[str, bytes], tmp_path: Path
) -> None:
    """A file signed under another CA keeps its bytes but fails the pinned anchor."""
    forger = ensure_chain(tmp_path / "forger", production=False)
    signed = sign_file(originals["image/png"], "image/png", CLAIM, forger)
    reading = read_claim(signed, "image/png", creds.ca_pem)
    assert reading is not None and reading.intact and not reading.trusted
    assert "signingCredential.untrusted" in reading.codes
    assert reading.signer_sha256 == forger.signer_sha256 and reading.anchor_sha256 is None


def test_read_claim_none_without_manifest(
    originals: dict[str, bytes], creds: C2paCredentials
) -> None:
    """A file without a C2PA manifest reads as None."""
    assert read_claim(originals["application/pdf"], None, creds.ca_pem) is None


def test_read_and_sign_refuse_unsupported_types(creds: C2paCredentials) -> None:
    """Unknown magic bytes and unsupported media types raise UNSUPPORTED_TYPE."""
    with pytest.raises(UnsupportedMedia) as caught:
        read_claim(b"GIF89a....", None, creds.ca_pem)
    assert caught.value.code == "UNSUPPORTED_TYPE"
    with pytest.raises(UnsupportedMedia):
        sign_file(b"GIF89a....", "image/gif", CLAIM, creds)


def test_egress_claim_refuses_names_and_bad_hashes() -> None:
    """The recipient is a handle and hashes are SHA-256 hex: free text does not validate."""
    with pytest.raises(ValidationError):
        CLAIM.model_validate({**CLAIM.model_dump(), "recipient": "Dr. Jane Roe"})
    with pytest.raises(ValidationError):
        CLAIM.model_validate({**CLAIM.model_dump(), "source_sha256s": ["not-a-hash"]})
