"""Intake validation verdicts, through the real bounded child process.

Every file in the corpus's ``bad_inputs`` gets the verdict from MANIFEST.md
section (B); every scan in ``ocr_gt`` is accepted with its type and page count.
"""

from __future__ import annotations

import os
import shutil
import zlib
from pathlib import Path

import pytest
from PIL import Image

import activities.inspect.untrusted as untrusted
from activities.inspect.untrusted import inspect_untrusted
from custody.errors import Code, DocumentRejected
from custody.settings import Limits

CORPUS = Path(
    os.environ.get("CUSTODY_CORPUS")
    or Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
)
BAD = CORPUS / "bad_inputs"
GOOD = CORPUS / "ocr_gt"

# MANIFEST.md (B). None means accepted.
EXPECTED: dict[str, Code | None] = {
    "empty_zero_bytes.pdf": Code.EMPTY,
    "qpdf_bad1_not_a_pdf.pdf": Code.UNSUPPORTED_TYPE,
    "ocrmypdf_invalid_header_only.pdf": Code.CORRUPT,
    # SURVIVE: pdfium rebuilds the xref by scanning objects, and the raw page walk
    # agrees on the single page, so OCR reads what a viewer shows. Accepted with
    # the note "pdf_repaired" (pdfium reports the xref table invalid).
    "qpdf_bad-xref.pdf": None,
    "qpdf_xref-errors.pdf": None,
    "qpdf_pages-loop.pdf": Code.CORRUPT,
    "encrypted_libreoffice-writer-password.pdf": Code.ENCRYPTED,
    # POLICY: refused by default; see test_encrypted_empty_password_policy_allows.
    "encrypted_pypdf_r2-owner-password.pdf": Code.ENCRYPTED,
    "js_corkami_javascript.pdf": Code.ACTIVE_CONTENT,
    "xfa_ocrmypdf_livecycle.pdf": Code.DYNAMIC_XFA,
    "bomb_ocrmypdf_hugemono.pdf": Code.PIXEL_LIMIT,
    "bigpage_ocrmypdf_enormous.pdf": Code.PIXEL_LIMIT,
    "polyglot_pe_zip_pdf.pdf": Code.UNSUPPORTED_TYPE,
    "elf_renamed.pdf": Code.UNSUPPORTED_TYPE,
    "zip_renamed.pdf": Code.UNSUPPORTED_TYPE,
    "bomb_spark_225000x225000.png": Code.PIXEL_LIMIT,
    "bomb_pillow_decompression_bomb.gif": Code.UNSUPPORTED_TYPE,
    "pillow_truncated_end_chunk.png": Code.CORRUPT,
    "pillow_broken.png": Code.CORRUPT,
    "tiff_pillow_seek_too_large.tif": Code.CORRUPT,
    "tiff_pillow_oom-225817ca.tif": Code.CORRUPT,
    "tiff_pillow_libtiff_segfault.tif": Code.CORRUPT,
}
# The test's own oracle; the validator itself never looks at a suffix.
MEDIA_BY_SUFFIX = {".png": "image/png", ".jpg": "image/jpeg", ".tif": "image/tiff"}
MEDIA_BY_SUFFIX[".pdf"] = "application/pdf"
GOOD_FILES = sorted(p.name for p in GOOD.glob("*") if p.suffix in MEDIA_BY_SUFFIX)
PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"


def build_pdf(objects: dict[int, bytes]) -> bytes:
    """A classic-xref PDF from numbered object bodies; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref, size = len(out), max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, size))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    return bytes(out)


def build_objstm_pdf(packed: dict[int, bytes], direct: dict[int, bytes]) -> bytes:
    """A PDF 1.5 whose ``packed`` objects sit in one Flate object stream, with an xref stream."""
    stm, xref_number = max(packed | direct) + 1, max(packed | direct) + 2
    entries, position = [], 0
    for number, text in packed.items():
        entries.append(b"%d %d" % (number, position))
        position += len(text) + 1
    head = b" ".join(entries) + b"\n"
    data = zlib.compress(head + b"".join(text + b"\n" for text in packed.values()))
    objects = dict(direct)
    stream_dict = b"<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>"
    objects[stm] = stream_dict % (len(packed), len(head), len(data))
    objects[stm] += b"\nstream\n%s\nendstream" % data
    out, where = bytearray(b"%PDF-1.5\n"), {}
    for number in sorted(objects):
        where[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    where[xref_number] = len(out)
    rows = b"\x00\x00\x00\x00\x00\xff\xff"  # object 0, free
    for number in range(1, xref_number + 1):
        if number in packed:
            index = list(packed).index(number)
            rows += b"\x02" + stm.to_bytes(4, "big") + index.to_bytes(2, "big")
        else:
            rows += b"\x01" + where[number].to_bytes(4, "big") + b"\x00\x00"
    xref_dict = b"<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>"
    out += b"%d 0 obj\n" % xref_number + xref_dict % (xref_number + 1, len(rows))
    out += b"\nstream\n%s\nendstream\nendobj\n" % rows
    out += b"startxref\n%d\n%%%%EOF\n" % where[xref_number]
    return bytes(out)


def rejection(path: Path, limits: Limits | None = None) -> DocumentRejected:
    with pytest.raises(DocumentRejected) as caught:
        inspect_untrusted(path, limits or Limits())
    return caught.value


def test_corpus_every_bad_input_has_a_verdict() -> None:
    """The verdict table names exactly the files in bad_inputs, so a new one needs a decision."""
    assert BAD.is_dir(), f"corpus not found at {CORPUS}; set CUSTODY_CORPUS"
    assert sorted(p.name for p in BAD.iterdir()) == sorted(EXPECTED)
    assert len(GOOD_FILES) == 21


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_gets_manifest_verdict(name: str) -> None:
    """Each hostile or malformed file ends in its table verdict, never a crash or a hang."""
    expected = EXPECTED[name]
    if expected is None:
        found = inspect_untrusted(BAD / name, Limits())
        assert (found.media_type, found.pages) == ("application/pdf", 1)
        assert "pdf_repaired" in found.notes
    else:
        assert rejection(BAD / name).code == expected


def test_encrypted_empty_password_policy_allows() -> None:
    """An owner-password-only PDF is accepted, and noted, when the policy opts in."""
    limits = Limits(allow_encrypted_empty_password=True)
    found = inspect_untrusted(BAD / "encrypted_pypdf_r2-owner-password.pdf", limits)
    assert (found.pages, found.notes) == (1, ["pdf_encrypted_empty_password"])


@pytest.mark.parametrize("name", GOOD_FILES)
def test_good_scan_accepted_with_type_and_pages(name: str) -> None:
    """Every ground-truth scan is accepted with its media type and page count."""
    found = inspect_untrusted(GOOD / name, Limits())
    assert found.media_type == MEDIA_BY_SUFFIX[Path(name).suffix]
    assert found.pages == (2 if name.startswith("funsdpdf_2pages") else 1)
    assert 0 < found.max_page_pixels <= Limits().max_page_pixels


def test_hugemono_bomb_caught_by_image_size_alone() -> None:
    """With the page rules relaxed, the 35000x35000 image is still refused, unrendered."""
    limits = Limits(max_page_inches=200, max_page_pixels=10**12, decode_timeout_s=10)
    refused = rejection(BAD / "bomb_ocrmypdf_hugemono.pdf", limits)
    assert (refused.code, refused.detail) == (Code.PIXEL_LIMIT, "image 1225000000 px > 60000000")


def test_wall_clock_limit_gives_decode_limit() -> None:
    """A child still running at the deadline is killed and the document is DECODE_LIMIT."""
    limits = Limits(decode_timeout_s=0.001)
    pdf = GOOD / "funsdpdf_2pages_86220490_86328049.pdf"
    assert rejection(pdf, limits).code == Code.DECODE_LIMIT


def test_memory_limit_gives_decode_limit(tmp_path: Path) -> None:
    """A page whose decode needs more than decode_memory_mb is DECODE_LIMIT, not a dead worker."""
    path = tmp_path / "flat.png"
    Image.new("RGB", (6000, 6000), "white").save(path)  # ~120 KB, 144 MB decoded
    assert rejection(path, Limits(decode_memory_mb=128)).code == Code.DECODE_LIMIT
    assert inspect_untrusted(path, Limits(decode_memory_mb=512)).pages == 1


def test_extension_is_ignored(tmp_path: Path) -> None:
    """A PNG named x.pdf is inspected as the PNG its bytes say it is."""
    shutil.copy(GOOD / "funsd_82092117.png", tmp_path / "x.pdf")
    assert inspect_untrusted(tmp_path / "x.pdf", Limits()).media_type == "image/png"


def test_oversized_file_too_large_without_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file over max_bytes is TOO_LARGE from its size alone; no child is started."""
    path = tmp_path / "big.png"
    with path.open("wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n")
        handle.truncate(Limits().max_bytes + 1)  # sparse: nothing real to decode

    def no_child() -> None:
        raise AssertionError("a child was started")

    monkeypatch.setattr(untrusted, "_fork", no_child)
    assert rejection(path).code == Code.TOO_LARGE


def test_hex_escaped_javascript_is_active_content(tmp_path: Path) -> None:
    """``/S /J#61vaScript /J#53 (...)`` is JavaScript to every viewer, and to us."""
    action = b"/OpenAction << /S /J#61vaScript /J#53 (app.alert(1)) >>"
    catalog = b"<< /Type /Catalog /Pages 2 0 R %s >>" % action
    pages = b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>"
    path = tmp_path / "hex.pdf"
    path.write_bytes(build_pdf({1: catalog, 2: pages, 3: PAGE}))
    assert rejection(path).code == Code.ACTIVE_CONTENT


def test_javascript_in_object_stream_is_active_content(tmp_path: Path) -> None:
    """An /OpenAction hidden in a compressed object stream is found; the clean twin passes."""
    pages = b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>"
    clean, hostile = tmp_path / "clean.pdf", tmp_path / "hostile.pdf"
    clean.write_bytes(
        build_objstm_pdf({1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: pages}, {3: PAGE})
    )
    action = b"/OpenAction << /S /JavaScript /JS (app.alert(1)) >>"
    catalog = b"<< /Type /Catalog /Pages 2 0 R %s >>" % action
    hostile.write_bytes(build_objstm_pdf({1: catalog, 2: pages}, {3: PAGE}))
    assert b"JavaScript" not in hostile.read_bytes()
    assert inspect_untrusted(clean, Limits()).pages == 1
    assert rejection(hostile).code == Code.ACTIVE_CONTENT


def test_page_tree_count_lie_is_corrupt(tmp_path: Path) -> None:
    """A tree holding two pages under /Count 1 (pdfium says one) is CORRUPT."""
    pages = b"<< /Type /Pages /Count 1 /Kids [3 0 R 4 0 R] >>"
    path = tmp_path / "lie.pdf"
    path.write_bytes(
        build_pdf({1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: pages, 3: PAGE, 4: PAGE})
    )
    assert rejection(path).code == Code.CORRUPT


def test_outcome_signal_maps_to_corrupt_or_limit() -> None:
    """A decoder crash is CORRUPT with the signal number; SIGKILL and SIGXCPU are DECODE_LIMIT."""
    with pytest.raises(DocumentRejected) as crashed:
        untrusted._outcome(-11, b"")
    assert (crashed.value.code, crashed.value.detail) == (
        Code.CORRUPT,
        "decoder crashed (signal 11)",
    )
    with pytest.raises(DocumentRejected) as killed:
        untrusted._outcome(-9, b"")
    assert killed.value.code == Code.DECODE_LIMIT


@pytest.mark.parametrize("out", [b"", b"not json\n", b'{"error": "ImportError"}\n', b"[1]\n"])
def test_outcome_without_verdict_is_transient(out: bytes) -> None:
    """A child that gives no verdict raises a plain RuntimeError, which the activity retries."""
    with pytest.raises(RuntimeError) as failed:
        untrusted._outcome(0, out)
    assert not isinstance(failed.value, DocumentRejected)
