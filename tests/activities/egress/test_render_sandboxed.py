"""A release's pages are decoded only in the sandboxed child, never in the I/O worker.

The worker's own decoders are replaced by stand-ins that fail the test when
handed the source's bytes (stand-ins to prove a negative, as the OCR sandbox
test does): pdfium's ``PdfDocument``, Pillow's ``Image.open``, pikepdf's
``open`` and the raster and text-layer helpers. They stay real for every
other input, since the worker still assembles and signs the files it makes.
The child is another process, so it decodes for real: a born-digital PDF
whose page carries a JPEG 2000 and a CCITT G4 image (what intake never
decodes and OCR reads through the text layer), and a scanned PNG.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw
from temporalio.testing import ActivityEnvironment

import activities.pages.raster as raster
import activities.pages.textlayer as textlayer
from activities.release import ReleaseActivities
from activities.scratch import StagingArea
from custody import egress as eg
from custody import ids
from custody import release_steps as steps
from custody.ledger.signing import signer_from_settings
from custody.models import PageText, Word
from custody.settings import Settings
from custody.stores.local import LocalStore

TENANT = "clinic-a"
POLICY = eg.Policy(name="all-files", include=("searchable_pdf", "page_images", "text"))
# Where the two images sit on the page, in points from the bottom left.
JPX_BOX, CCITT_BOX = (72, 430, 192, 510), (300, 410, 400, 510)


def _halves(size: tuple[int, int], mode: str) -> Image.Image:
    """Half black, half white: dark pixels show whatever the decoder's polarity."""
    image = Image.new(mode, size, 255 if mode == "L" else 1)
    ImageDraw.Draw(image).rectangle((0, 0, size[0] // 2, size[1]), fill=0)
    return image


def _jpx(pdf: pikepdf.Pdf) -> pikepdf.Stream:
    buf = io.BytesIO()
    _halves((120, 80), "L").save(buf, "JPEG2000")
    return pdf.make_stream(
        buf.getvalue(), Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
        Width=120, Height=80, ColorSpace=pikepdf.Name.DeviceGray,
        Filter=pikepdf.Name.JPXDecode,
    )  # fmt: skip


def _ccitt(pdf: pikepdf.Pdf) -> pikepdf.Stream:
    """A G4 fax image: the one strip of a Group 4 TIFF, as a scanner's PDF embeds it."""
    buf = io.BytesIO()
    _halves((100, 100), "1").save(buf, "TIFF", compression="group4")
    tiff = Image.open(io.BytesIO(buf.getvalue()))
    offset, count = tiff.tag_v2[273][0], tiff.tag_v2[279][0]
    strip = buf.getvalue()[offset : offset + count]
    parms = pikepdf.Dictionary(K=-1, Columns=100, Rows=100, BlackIs1=False)
    return pdf.make_stream(
        strip, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image,
        Width=100, Height=100, ColorSpace=pikepdf.Name.DeviceGray, BitsPerComponent=1,
        Filter=pikepdf.Name.CCITTFaxDecode, DecodeParms=parms,
    )  # fmt: skip


def born_digital_with_images() -> bytes:
    """One typeset letter page with a JPX and a CCITT image on it."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
                           BaseFont=pikepdf.Name.Helvetica)
    )  # fmt: skip
    place = "q {w} 0 0 {h} {x} {y} cm /{name} Do Q"
    jx, jy, jx1, jy1 = JPX_BOX
    cx, cy, cx1, cy1 = CCITT_BOX
    content = " ".join(
        [
            "BT /F1 12 Tf 72 700 Td (Discharge summary for ward 7) Tj ET",
            place.format(w=jx1 - jx, h=jy1 - jy, x=jx, y=jy, name="Im1"),
            place.format(w=cx1 - cx, h=cy1 - cy, x=cx, y=cy, name="Im2"),
        ]
    )
    resources = pikepdf.Dictionary(
        Font=pikepdf.Dictionary(F1=font),
        XObject=pikepdf.Dictionary(Im1=_jpx(pdf), Im2=_ccitt(pdf)),
    )
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, 792], Resources=resources,
        Contents=pdf.make_stream(content.encode()),
    )  # fmt: skip
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _forbidding(sources: list[bytes], real: Callable[..., Any]) -> Callable[..., Any]:
    """``real``, except that handing it a source's bytes (or a file of them) fails the test."""
    digests = {hashlib.sha256(source).hexdigest() for source in sources}

    def guarded(first: Any = None, *args: Any, **kwargs: Any) -> Any:
        data = _bytes_of(first)
        if data is not None and hashlib.sha256(data).hexdigest() in digests:
            raise AssertionError("a source was decoded inside the worker")
        return real(first, *args, **kwargs)

    return guarded


def _bytes_of(value: Any) -> bytes | None:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (str, Path)) and Path(value).is_file():
        return Path(value).read_bytes()
    if isinstance(value, io.BytesIO):
        return value.getvalue()
    return None


def _in_process(*_: object, **__: object) -> None:
    raise AssertionError("a page was rendered inside the worker")


def guard_worker(monkeypatch: pytest.MonkeyPatch, sources: list[bytes]) -> None:
    """Stand-ins: every in-process decode of a source fails the test."""
    monkeypatch.setattr(raster, "iter_pages", _in_process)
    monkeypatch.setattr(raster, "render_pdf_page", _in_process)
    monkeypatch.setattr(textlayer, "page_layer", _in_process)
    monkeypatch.setattr(Image, "open", _forbidding(sources, Image.open))
    monkeypatch.setattr(pikepdf, "open", _forbidding(sources, pikepdf.open))
    real_init = pdfium.PdfDocument.__init__
    check = _forbidding(sources, lambda *_a, **_k: None)

    def init(self: Any, input: Any, *args: Any, **kwargs: Any) -> None:
        check(input)
        real_init(self, input, *args, **kwargs)

    monkeypatch.setattr(pdfium.PdfDocument, "__init__", init)


def _publish(store: LocalStore, data: bytes, media_type: str, width: int, height: int) -> Any:
    """The objects a published document leaves that a release reads: source, pages, text."""
    sha = hashlib.sha256(data).hexdigest()
    store.put(ids.source_key(sha, TENANT), data)
    box = [[10, 10], [200, 10], [200, 40], [10, 40]]
    page = PageText(page=0, width=width, height=height, text="Discharge",
                    words=[Word(text="Discharge", confidence=0.9, box=box)],
                    mean_confidence=0.9, seconds=0.0)  # fmt: skip
    pages_key, text_key = ids.pages_key(sha, TENANT, "0" * 16), ids.text_key(sha, TENANT, "0" * 16)
    store.put(pages_key, f"[{page.model_dump_json()}]".encode())
    store.put(text_key, b"Discharge")
    return eg.SourceDoc(sha256=sha, source_key=ids.source_key(sha, TENANT), media_type=media_type,
                        pages=1, pages_key=pages_key, text_key=text_key)  # fmt: skip


def _render(tmp_path: Path, sources: list[eg.SourceDoc], store: LocalStore) -> steps.Rendered:
    settings = Settings(home=tmp_path / "home")
    acts = ReleaseActivities(
        store, StagingArea(tmp_path / "staging"), signer_from_settings(settings), settings
    )
    inp = steps.RenderInput(
        release_id=eg.release_id(TENANT, "clinic-b", POLICY.sha256(), [s.sha256 for s in sources]),
        tenant=TENANT, actor="op:test", requested_at=datetime.now(UTC), policy=POLICY,
        recipient="clinic-b", sources=sources,
    )  # fmt: skip
    rendered: steps.Rendered = ActivityEnvironment().run(acts.render, inp)
    return rendered


def test_release_render_decodes_a_born_digital_pdf_with_images_only_in_the_child(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JPX and CCITT images on a typeset page, and a scan, render with no decode in the worker."""
    pdf_bytes = born_digital_with_images()
    png_bytes = (corpus / "ocr_gt" / "funsd_82092117.png").read_bytes()
    store = LocalStore(tmp_path / "objects")
    sources = [
        _publish(store, pdf_bytes, "application/pdf", 1700, 2200),
        _publish(store, png_bytes, "image/png", 1000, 1000),
    ]
    guard_worker(monkeypatch, [pdf_bytes, png_bytes])
    rendered = _render(tmp_path, sources, store)
    monkeypatch.undo()  # the checks below read the released files with real decoders
    names = sorted(f.name for f in rendered.files)
    assert len(names) == 6 and sum(n.endswith(".png") for n in names) == 2
    pdf_ref = next(f for f in rendered.files if f.name == f"document-{sources[0].sha256[:16]}.pdf")
    released = store.get(eg.release_file_key(TENANT, _rid(sources), pdf_ref.name))
    assert _image_regions_dark(released)


def _rid(sources: list[eg.SourceDoc]) -> str:
    return eg.release_id(TENANT, "clinic-b", POLICY.sha256(), [s.sha256 for s in sources])


def _image_regions_dark(released: bytes) -> bool:
    """Both embedded images reached the released page: the black half of each shows as a
    solid block of rows in its columns, which neither the bands' text nor the typeset line
    (nor the light diagonal mark) can make."""
    page = pdfium.PdfDocument(released)[0]
    image = np.asarray(page.render(scale=1).to_pil().convert("L"))  # one pixel per point
    solid = []
    for x0, y0, x1, y1 in (JPX_BOX, CCITT_BOX):
        middle = (x0 + x1) // 2
        halves = (image[:, x0 + 5 : middle - 5], image[:, middle + 5 : x1 - 5])  # either polarity
        rows = max(int(((half < 64).mean(axis=1) > 0.8).sum()) for half in halves)
        solid.append(rows >= 0.85 * (y1 - y0))
    return all(solid)
