"""The trust anchor and signing keys: pinned outside the store, valid, not for development."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custody.errors import Code, ConfigurationError, KeyUntrusted, UsageError
from custody.ledger.signing import Signer, load_signer, rotate
from custody.settings import Settings
from starter.evidence.trust import TrustAnchors, fingerprint, key_fingerprint


def test_trust_fingerprint_is_the_sha256_whose_prefix_is_the_key_id(tmp_path: Path) -> None:
    """A key's fingerprint is 64 hex characters and its key ID is the first 16."""
    signer = rotate(tmp_path / "signing")
    fpr = fingerprint(signer.public)
    assert len(fpr) == 64 and fpr.startswith(signer.kid)
    assert key_fingerprint(signer.public_record()) == fpr


def test_trust_pinned_fingerprints_replace_the_local_keys(tmp_path: Path) -> None:
    """With CUSTODY_TRUST_FPRS or --trust, only those keys are anchors, not the local one."""
    local = rotate(tmp_path / "signing")
    other = rotate(tmp_path / "elsewhere")
    settings = Settings(home=tmp_path, trust_fprs=fingerprint(other.public))
    anchors = TrustAnchors.from_settings(settings)
    assert anchors.fingerprints == {fingerprint(other.public)}
    with pytest.raises(KeyUntrusted) as err:
        anchors.check(local.public, at=datetime.now(UTC))
    assert err.value.code is Code.KEY_UNTRUSTED
    both = TrustAnchors.from_settings(settings, [f"SHA256:{fingerprint(local.public).upper()}"])
    both.check(local.public_record(), at=datetime.now(UTC))


def test_trust_without_pins_the_anchors_are_the_local_signing_keys(tmp_path: Path) -> None:
    """No fingerprint configured: the keys of the signing folder, never the store's copies."""
    first = rotate(tmp_path / "signing")
    second = rotate(tmp_path / "signing")
    anchors = TrustAnchors.from_settings(Settings(home=tmp_path))
    assert anchors.source == "local"
    assert anchors.fingerprints == {fingerprint(first.public), fingerprint(second.public)}


def test_trust_a_rogue_key_in_the_key_list_verifies_nothing(tmp_path: Path) -> None:
    """A key published beside the trusted one signs validly but is refused as untrusted."""
    good, rogue = rotate(tmp_path / "a"), rotate(tmp_path / "b")
    anchors = TrustAnchors.pinned([fingerprint(good.public)])
    keys = {s.kid: s.public_record() for s in (good, rogue)}
    body = b"record"
    assert anchors.verify(body, good.sign(body), keys, at=datetime.now(UTC)) is None
    why = anchors.verify(body, rogue.sign(body), keys, at=datetime.now(UTC))
    assert why is not None and why.startswith("KEY_UNTRUSTED")
    assert anchors.trusted(keys).keys() == {good.kid}


def test_trust_validity_period_is_checked_at_the_signing_time(tmp_path: Path) -> None:
    """A signature dated after ``valid_to`` (or before ``valid_from``) is KEY_OUTSIDE_VALIDITY."""
    signer = rotate(tmp_path / "signing", valid_days=1)
    anchors = TrustAnchors.pinned([fingerprint(signer.public)])
    record = signer.public_record()
    anchors.check(record, at=datetime.now(UTC) + timedelta(hours=1))
    for when in (datetime.now(UTC) + timedelta(days=2), datetime.now(UTC) - timedelta(days=1)):
        with pytest.raises(KeyUntrusted) as err:
            anchors.check(record, at=when)
        assert err.value.code is Code.KEY_OUTSIDE_VALIDITY


def test_trust_a_validity_extended_in_the_store_breaks_the_self_signature(tmp_path: Path) -> None:
    """Whoever edits the published record's ``valid_to`` cannot re-sign it: KEY_UNTRUSTED."""
    signer = rotate(tmp_path / "signing", valid_days=1)
    anchors = TrustAnchors.pinned([fingerprint(signer.public)])
    forged = signer.public_record().model_copy(
        update={"valid_to": datetime.now(UTC) + timedelta(days=999)}
    )
    with pytest.raises(KeyUntrusted) as err:
        anchors.check(forged, at=datetime.now(UTC) + timedelta(days=2))
    assert err.value.code is Code.KEY_UNTRUSTED


def test_trust_development_key_is_refused_in_production(tmp_path: Path) -> None:
    """A development key's record verifies in development and is KEY_DEVELOPMENT in production."""
    dev = rotate(tmp_path / "signing", development=True)
    record = dev.public_record()
    TrustAnchors.pinned([fingerprint(dev.public)]).check(record, at=datetime.now(UTC))
    with pytest.raises(KeyUntrusted) as err:
        TrustAnchors.pinned([fingerprint(dev.public)], production=True).check(
            record, at=datetime.now(UTC)
        )
    assert err.value.code is Code.KEY_DEVELOPMENT


def test_trust_fingerprint_must_be_whole(tmp_path: Path) -> None:
    """A key ID or other prefix is not a trust anchor: a usage error, not a weaker pin."""
    signer = rotate(tmp_path / "signing")
    with pytest.raises(UsageError):
        TrustAnchors.pinned([signer.kid])


def test_signing_development_key_is_refused_for_signing_in_production(tmp_path: Path) -> None:
    """The signing folder's development key is not loaded when CUSTODY_ENV=production."""
    rotate(tmp_path / "signing", development=True)
    assert load_signer(tmp_path / "signing", None, production=False).development
    with pytest.raises(KeyUntrusted) as err:
        load_signer(tmp_path / "signing", None, production=True)
    assert err.value.code is Code.KEY_DEVELOPMENT


@pytest.mark.parametrize("target", ["folder", "key file"])
def test_signing_key_readable_beyond_its_owner_is_refused(tmp_path: Path, target: str) -> None:
    """A signing folder or key file that group or others can read is KEY_PERMISSIONS."""
    folder = tmp_path / "signing"
    rotate(folder)
    path = folder if target == "folder" else next(folder.glob("*.key"))
    os.chmod(path, 0o750 if target == "folder" else 0o640)
    with pytest.raises(ConfigurationError) as err:
        load_signer(folder, None, production=False)
    assert err.value.code is Code.KEY_PERMISSIONS


def test_signing_key_outside_its_validity_does_not_sign(tmp_path: Path) -> None:
    """A key whose validity has ended refuses to sign rather than sign a dated lie."""
    expired = rotate(tmp_path / "signing", valid_days=-1)
    reloaded = load_signer(tmp_path / "signing", None, production=False)
    assert reloaded.valid_to == expired.valid_to
    for signer in (expired, reloaded):
        with pytest.raises(KeyUntrusted) as err:
            signer.sign(b"x")
        assert err.value.code is Code.KEY_OUTSIDE_VALIDITY
    assert isinstance(expired, Signer)


def test_trust_record_published_before_self_signing_is_still_accepted(tmp_path: Path) -> None:
    """A legacy key record (no validity, no self-signature) verifies; one whose signature was
    stripped from a record with a validity does not, nor in production unless pinned."""
    signer = rotate(tmp_path / "signing", valid_days=1)
    legacy = signer.public_record().model_copy(
        update={"self_sig": None, "valid_from": None, "valid_to": None}
    )
    local = TrustAnchors(frozenset({fingerprint(signer.public)}), source="local")
    local.check(legacy, at=datetime.now(UTC))
    TrustAnchors.pinned([fingerprint(signer.public)], production=True).check(
        legacy, at=datetime.now(UTC)
    )
    stripped = signer.public_record().model_copy(update={"self_sig": None})
    production_local = TrustAnchors(local.fingerprints, production=True, source="local")
    for anchors, record in ((local, stripped), (production_local, legacy)):
        with pytest.raises(KeyUntrusted):
            anchors.check(record, at=datetime.now(UTC))
