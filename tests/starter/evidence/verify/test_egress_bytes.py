"""A release receipt is verified as stored, never as the model re-serialises it.

Each case changes a genuinely signed receipt's stored bytes in a way that
still parses to the same ``SignedReceipt`` (so a signature checked over the
re-serialised model would still verify) and names the checks that must FAIL.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from custody import egress as eg
from custody.canonical import canonical_json, signed_member
from custody.ledger.signing import PublicKeyRecord, Signer, verify
from custody.state.egress import SignedReceipt
from starter.evidence.verify.egress import stored_receipt_checks

AT = datetime(2026, 11, 30, 21, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer(Ed25519PrivateKey.generate())


@pytest.fixture(scope="module")
def raw(signer: Signer) -> bytes:
    """A receipt signed and stored exactly as ``custody.release.receipt`` writes it."""
    receipt = eg.Receipt(
        release_id="ab" * 16,
        tenant="clinic-a",
        recipient="clinic-b",
        policy="default",
        policy_sha256="cd" * 32,
        files=[
            eg.FileRef(name="a.pdf", sha256="ef" * 32, bytes=1234, media_type="application/pdf")
        ],
        sources=["01" * 32],
        packet_sha256="23" * 32,
        delivery=eg.Delivered(
            channel=eg.ChannelKind.OUTBOX, location="outbox", answer_sha256="45" * 32, at=AT
        ),
        egress_event_seq=7,
        egress_event_hash="67" * 32,
        workflow_id="release-ab",
        run_id="run-1",
        signed_at=AT,
    )
    return SignedReceipt.sign(receipt, signer).canonical()


def _keys(signer: Signer) -> dict[str, PublicKeyRecord]:
    return {signer.kid: signer.public_record()}


def _reordered(raw: bytes) -> bytes:
    """The receipt member's names in reverse order, otherwise compact."""
    envelope = json.loads(raw)
    envelope["receipt"] = dict(reversed(list(envelope["receipt"].items())))
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def _swapped(raw: bytes) -> bytes:
    """The signature member first, the receipt second."""
    envelope = json.loads(raw)
    swapped = {"signature": envelope["signature"], "receipt": envelope["receipt"]}
    return json.dumps(swapped, separators=(",", ":"), sort_keys=False).encode()


TAMPERINGS: dict[str, tuple[Callable[[bytes], bytes], set[str]]] = {
    "space inside the receipt": (
        lambda r: r.replace(b',"recipient":', b', "recipient":', 1),
        {"receipt.canonical", "receipt.signature"},
    ),
    "space between the members": (
        lambda r: r.replace(b'},"signature":', b'}, "signature":', 1),
        {"receipt.canonical"},
    ),
    "members reordered": (_reordered, {"receipt.canonical", "receipt.signature"}),
    "signature member first": (_swapped, {"receipt.canonical", "receipt.signature"}),
    # Sorted last and so still canonical: only the signature over the stored bytes sees it.
    "unknown member the model drops": (
        lambda r: r.replace(b'"workflow_id":"release-ab"}', b'"workflow_id":"release-ab","zz":1}'),
        {"receipt.signature"},
    ),
    "duplicated member": (
        lambda r: r.replace(b'{"receipt":{', b'{"receipt":{"tenant":"clinic-z",', 1),
        {"receipt.canonical", "receipt.signature"},
    ),
    "number reformatted": (
        lambda r: r.replace(b'"egress_event_seq":7', b'"egress_event_seq":7.0'),
        {"receipt.canonical", "receipt.signature"},
    ),
}


def test_egress_verify_bytes_genuine_receipt_passes(raw: bytes, signer: Signer) -> None:
    """The receipt as written is canonical and its stored receipt member verifies."""
    checks = stored_receipt_checks(raw, SignedReceipt.model_validate_json(raw), _keys(signer))
    assert [(c.name, c.ok) for c in checks] == [
        ("receipt.canonical", True),
        ("receipt.signature", True),
    ]


@pytest.mark.parametrize("case", list(TAMPERINGS))
def test_egress_verify_bytes_same_model_other_bytes_fail_by_name(
    raw: bytes, signer: Signer, case: str
) -> None:
    """Bytes that parse to the very same receipt, but are not the stored ones, FAIL by name."""
    change, expected = TAMPERINGS[case]
    tampered = change(raw)
    assert tampered != raw
    signed = SignedReceipt.model_validate_json(tampered)
    assert signed == SignedReceipt.model_validate_json(raw)  # the model cannot tell
    resigned = canonical_json(signed.receipt)
    assert verify(resigned, signed.signature, _keys(signer)) is None  # nor a re-serialised check
    failed = {c.name for c in stored_receipt_checks(tampered, signed, _keys(signer)) if not c.ok}
    assert failed == expected


def test_egress_verify_bytes_signed_member_is_cut_from_the_stored_bytes(raw: bytes) -> None:
    """The signed member is the stored substring; a non-envelope says why, with no content."""
    member = signed_member(raw, "receipt")
    assert isinstance(member, bytes) and raw.startswith(b'{"receipt":' + member + b",")
    assert signed_member(b'{"signature":{}}', "receipt") == (
        "receipt member not first (not written by Custody)"
    )
    assert signed_member(b'{"receipt":{"a":', "receipt") == "receipt member unreadable"
    assert signed_member(b'{"receipt":\xff}', "receipt") == "receipt is not UTF-8"
