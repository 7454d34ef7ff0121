"""``custody verify`` checks a document's redacted views: one altered byte fails a named check.

The view is the ``viewed`` fixture's (conftest); each case alters one object
in its own copy of the store and runs ``verify_document`` with the trust
anchor taken from the settings (the local signing keys).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from activities.redact.policy import DEFAULT_REDACTION
from custody.ledger.signing import public_keys
from custody.redactions import view_key
from custody.stores.local import LocalStore
from starter.evidence.trust import TrustAnchors
from starter.evidence.verify.document import verify_document
from tests.activities.redact.conftest import APPROVER, Viewed

NAMES = {
    "redaction.signature",
    "redaction.record",
    "redaction.pdf.hash",
    "redaction.text.hash",
    "redaction.ledger",
    "redaction.present",
}


def _copy(viewed: Viewed, tmp_path: Path) -> LocalStore:
    shutil.copytree(viewed.settings.objects_dir, tmp_path / "objects")
    return LocalStore(tmp_path / "objects")


def _checks(store: LocalStore, viewed: Viewed) -> dict[str, bool]:
    """Each check's name and whether all checks of that name passed."""
    anchors = TrustAnchors.from_settings(viewed.settings)
    keys = public_keys(store)
    report = verify_document(store, keys, viewed.sha256, viewed.tenant, anchors=anchors)
    found: dict[str, bool] = {}
    for check in report.checks:
        found[check.name] = found.get(check.name, True) and check.ok
    return found


def _failed(store: LocalStore, viewed: Viewed) -> set[str]:
    return {name for name, ok in _checks(store, viewed).items() if not ok}


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _view_json(s: LocalStore, v: Viewed) -> Path:
    return s.root / view_key(v.sha256, v.tenant, DEFAULT_REDACTION.sha256())


def _approver(s: LocalStore, v: Viewed) -> None:
    """The map's approver changed in place: the signature no longer holds."""
    path = _view_json(s, v)
    path.write_bytes(path.read_bytes().replace(APPROVER.encode(), b"reviewer@tesX"))


def _reformatted(s: LocalStore, v: Viewed) -> None:
    """The same JSON written with whitespace: not what was signed, byte for byte."""
    path = _view_json(s, v)
    path.write_bytes(json.dumps(json.loads(path.read_bytes()), indent=1).encode())


Tamper = Callable[[LocalStore, Viewed], None]
CASES: dict[str, tuple[Tamper, set[str]]] = {
    "pdf": (lambda s, v: _flip(s.root / v.signed.view.pdf_key), {"redaction.pdf.hash"}),
    "text": (lambda s, v: _flip(s.root / v.signed.view.text_key), {"redaction.text.hash"}),
    "approver": (_approver, {"redaction.signature"}),
    "reformatted": (_reformatted, {"redaction.signature"}),
    "deleted": (lambda s, v: _view_json(s, v).unlink(), {"redaction.present"}),
}


def test_verify_redactions_pass_on_an_untouched_view(viewed: Viewed) -> None:
    """Every redaction check runs and passes, and the whole document still verifies."""
    checks = _checks(LocalStore(viewed.settings.objects_dir), viewed)
    assert set(checks) >= NAMES and all(checks.values())


@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_redactions_name_the_altered_object(
    viewed: Viewed, tmp_path: Path, case: str
) -> None:
    """One altered or deleted object of the view fails exactly its own check."""
    tamper, expected = CASES[case]
    store = _copy(viewed, tmp_path)
    tamper(store, viewed)
    assert _failed(store, viewed) == expected
