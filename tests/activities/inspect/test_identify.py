"""``custody egress identify`` decodes a found file only in the locked-down child.

A released-style PDF (C2PA manifest, XMP identity) is read with every decoder
entry point in this process replaced by a stand-in that fails the test (a
stand-in to prove a negative): the manifest's claim, the XMP release id and
page 1 still come back, so they were read in the child. Hostile files from the
research corpus end with the child's code, never a crash of this process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import c2pa
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image

from activities.egress.pdfmeta import ReleaseMark, write_identity
from activities.egress.provenance import EgressClaim, ensure_chain, sign_file
from activities.inspect.identify import read_marks
from custody.errors import DocumentRejected

RELEASE = "0123456789abcdef0123456789abcdef"
CLAIM = EgressClaim(
    release_id=RELEASE,
    recipient="clinic-b",
    policy_name="research-v1",
    policy_sha256="a" * 64,
    source_sha256s=["b" * 64],
    tenant="acme",
)
MARK = ReleaseMark(
    release_id=RELEASE,
    recipient="clinic-b",
    policy_name="research-v1",
    policy_sha256=hashlib.sha256(b"policy").hexdigest(),
    date="2026-11-30",
)


@pytest.fixture(scope="module")
def released(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """A two-page corpus PDF with its XMP identity, then signed: (file, the CA's PEM)."""
    creds = ensure_chain(tmp_path_factory.mktemp("c2pa") / "chain", production=False)
    source = (corpus / "ocr_gt" / "funsdpdf_2pages_86220490_86328049.pdf").read_bytes()
    marked = write_identity(source, MARK)
    return sign_file(marked, "application/pdf", CLAIM, creds), creds.ca_pem


def _refuse(*_: Any, **__: Any) -> None:
    raise AssertionError("a found file was decoded in this process")


def test_identify_reads_manifest_xmp_and_page_in_the_child(
    released: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With c2pa, pikepdf, pdfium and Pillow's open refused here, every reading still arrives."""
    data, anchor = released
    for module, name in ((c2pa.Reader, "try_create"), (pikepdf, "open"), (Image, "open")):
        monkeypatch.setattr(module, name, _refuse)
    monkeypatch.setattr(pdfium, "PdfDocument", _refuse)
    marks, page = read_marks(data, anchor)
    assert marks.c2pa is not None and marks.c2pa.trusted
    assert (marks.c2pa.release_id, marks.c2pa.recipient) == (RELEASE, "clinic-b")
    assert marks.xmp == RELEASE
    assert page is not None and page.ndim == 2 and max(page.shape) <= 3000


def test_identify_untrusted_anchor_reads_claim_but_does_not_vouch(
    released: tuple[bytes, bytes],
) -> None:
    """Without this deployment's CA the child answers no trusted claim."""
    marks, _ = read_marks(released[0], None)
    assert marks.c2pa is None or not marks.c2pa.trusted


@pytest.mark.parametrize(
    ("name", "code"),
    [("bomb_spark_225000x225000.png", "PIXEL_LIMIT"), ("bomb_pillow_decompression_bomb.gif", None)],
)
def test_identify_hostile_file_ends_with_the_childs_code(
    corpus: Path, name: str, code: str | None
) -> None:
    """A decompression bomb is refused with its code; a format identify skips reads as nothing."""
    data = (corpus / "bad_inputs" / name).read_bytes()
    if code is None:
        marks, page = read_marks(data, None)
        assert (marks.c2pa, marks.xmp, page) == (None, None, None)
        return
    with pytest.raises(DocumentRejected) as err:
        read_marks(data, None)
    assert err.value.code.value == code
