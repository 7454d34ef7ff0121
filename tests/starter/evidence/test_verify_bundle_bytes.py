"""The offline bundle verifier checks signed objects as stored, never re-serialised.

A real bundle is exported from the published and released documents of
``test_bundle_receipts`` (its module fixture, reused here: a copy of the
session's released home); each case rewrites
the bundled record or receipt into other bytes that parse to the same value
(or add a member) and runs the bundle's own ``verify_bundle.py`` with pinned
keys. The old check, a signature over the re-serialised member, passed them all.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.starter.evidence import test_bundle_receipts as receipts
from tests.starter.evidence.test_bundle_receipts import Released, _pins, _unzipped, _verify

released = receipts.released  # a copy of the session's home: two published, one released


def _member_head(raw: bytes) -> bytes:
    """``{"record":{`` or ``{"receipt":{``: the signed member's opening."""
    return raw[: raw.index(b":{") + 2]


def _spaced(raw: bytes) -> bytes:
    return raw.replace(b',"', b', "', 1)


def _reordered(raw: bytes) -> bytes:
    """The signed member's names in reverse order, otherwise compact."""
    envelope = json.loads(raw)
    name = next(iter(envelope))
    envelope[name] = dict(reversed(list(envelope[name].items())))
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def _renumbered(raw: bytes) -> bytes:
    """The first integer member written as ``N.0``: the same double, another form."""
    return re.sub(rb'":(\d+)([,}])', rb'":\1.0\2', raw, count=1)


def _duplicated(raw: bytes) -> bytes:
    """The signed member's first name and value written twice: a last-wins parse sees no change."""
    head = _member_head(raw)
    first = next(iter(json.loads(raw)[head[2:-3].decode()].items()))
    pair = json.dumps(dict([first]), separators=(",", ":"), ensure_ascii=False).encode()[1:-1]
    return head + pair + b"," + raw[len(head) :]


def _extended(raw: bytes) -> bytes:
    """A member sorted last inside the signed member: still canonical JSON."""
    return raw.replace(b'},"signature":', b',"zz":1},"signature":', 1)


TAMPERINGS: dict[str, tuple[Callable[[bytes], bytes], set[str]]] = {
    "whitespace": (_spaced, {"canonical", "signature"}),
    "member order": (_reordered, {"canonical", "signature"}),
    "number format": (_renumbered, {"canonical", "signature"}),
    "duplicated member": (_duplicated, {"canonical", "signature"}),
    "duplicated signature": (
        lambda r: r[:-1] + b"," + r[r.index(b',"signature":') + 1 :],
        {"canonical", "signature"},
    ),
    "extra member": (_extended, {"signature"}),
    "extra envelope member": (lambda r: r[:-1] + b',"zz":1}', {"signature"}),
}


@pytest.fixture(scope="module")
def pristine(released: Released, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The released document's bundle, unzipped once; each case works on its own copy."""
    return _unzipped(released, released.sha256, tmp_path_factory.mktemp("bytes"))


def _failed(stdout: str) -> set[str]:
    return {line.split()[1] for line in stdout.splitlines() if line.startswith("FAIL  ")}


def test_verify_bundle_bytes_untouched_bundle_is_canonical_and_signed(
    released: Released, pristine: Path, tmp_path: Path
) -> None:
    """The exported record and receipt pass their canonical and stored-bytes signature checks."""
    rid = released.release_id
    good = _verify(pristine, tmp_path, _pins(released))
    assert good.returncode == 0 and _failed(good.stdout) == set(), good.stdout
    for name in ("record.canonical", "record.signature", f"receipt.canonical:{rid}"):
        assert f"PASS  {name}\n" in good.stdout


@pytest.mark.parametrize("case", list(TAMPERINGS))
@pytest.mark.parametrize("target", ["record", "receipt"])
def test_verify_bundle_bytes_restated_object_fails_by_name(
    released: Released, pristine: Path, tmp_path: Path, target: str, case: str
) -> None:
    """A bundled record or receipt in other bytes than those signed FAILs its named checks."""
    folder = tmp_path / "bundle"
    shutil.copytree(pristine, folder)
    rid = released.release_id
    path = folder / ("record.json" if target == "record" else f"receipts/{rid}.json")
    change, expected = TAMPERINGS[case]
    raw = path.read_bytes()
    tampered = change(raw)
    assert tampered != raw
    if "extra" not in case:  # the same value, only other bytes
        assert json.loads(tampered) == json.loads(raw)
    path.write_bytes(tampered)
    bad = _verify(folder, tmp_path, _pins(released))
    if target == "record":  # the published event pins the record file's hash as well
        want = {f"record.{c}" for c in expected} | {"ledger.events"}
    else:  # the receipt event in the log names the receipt file's hash as well
        want = {f"receipt.{c}:{rid}" for c in expected} | {f"receipt.logged:{rid}"}
    assert bad.returncode == 1 and _failed(bad.stdout) == want, bad.stdout
