"""How a released page's pixels are stored: near its source's size, as legible, mark included.

Stored as 8-bit grey under Flate at the OCR resolution, a signed release weighed
up to 5.9 times its source (a 100 dpi PDF scan drawn at 200 dpi) and 3.2 times
a 1-bit Group 4 TIFF. Each stamped page is now kept as what its source was:

- **bilevel** (1-bit TIFF, fax, a PDF of 1-bit images): 1 bit, CCITT Group 4,
  the fax gateways' own format. A 1-bit page has no grey, so the light diagonal
  mark becomes a line screen: its glyphs are inked on every fourth row, and
  nothing else changes (the scan's black stays black, so the mark still never
  lightens a pixel of the page).
- **grey**: 16 levels under Flate with PNG predictors, lossless from there on.
  On the corpus's grey scans (FUNSD forms, SROIE receipts) that is 0.2-0.8 of
  the source, where JPEG at quality 75-85 came out larger on all but one page
  and rings around strokes; steps of 17 keep faint print apart from its paper.
- A PDF page rasterised at more than its scan's own resolution is brought back
  down to it (:mod:`.original`); image sources keep their pixels as they are.

``custody bench egress`` measures the result (``size_ratio``, ``readback_ok``,
``legibility``); the corpus figures, with PP-OCRv6 and Tesseract, are in
docs/compliance.md ("Size", "Legibility").
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field

import numpy as np
import pikepdf
from PIL import Image, PngImagePlugin, TiffImagePlugin

from activities.pages.raster import GrayPage

_LEVELS = 16  # grey levels kept: 4 bits a pixel
_INK, _LIGHT = 160, 228  # 1 bit: darker than _INK is ink; darker than _LIGHT, the screen
_SCREEN_ROWS = 4  # the screen inks one row in four: a grey near the mark's 200
_GREY4 = [v for i in range(_LEVELS) for v in (i * 17,) * 3]
_TO_LEVEL = [(v * (_LEVELS - 1) + 127) // 255 for v in range(256)]  # the nearest level


@dataclass(frozen=True)
class PageImage:
    """One page's encoded pixels and what a PDF image dictionary says about them."""

    data: bytes
    width: int
    height: int
    bits: int
    filter: str
    parms: dict[str, int | bool] = field(default_factory=dict)


def is_bilevel(page: GrayPage) -> bool:
    """Whether every pixel is pure black or white, as a 1-bit source decodes."""
    return bool(np.logical_or(page == 0, page == 255).all())


def shrink(stamped: Image.Image, scale: float) -> Image.Image:
    """The stamped page at ``scale`` of its size (< 1: back to the source's resolution)."""
    if scale >= 1:
        return stamped
    size = (max(1, round(stamped.width * scale)), max(1, round(stamped.height * scale)))
    return stamped.resize(size, Image.Resampling.BOX)


def pdf_image(stamped: Image.Image, bilevel: bool) -> PageImage:
    """The page as a PDF image: CCITT G4 for a bilevel source, 16 grey levels under Flate else."""
    width, height = stamped.size
    if bilevel:
        parms: dict[str, int | bool] = {"K": -1, "Columns": width, "Rows": height, "BlackIs1": True}
        return PageImage(_g4(one_bit(stamped)), width, height, 1, "/CCITTFaxDecode", parms)
    parms = {"Predictor": 15, "Colors": 1, "BitsPerComponent": 4, "Columns": width}
    return PageImage(_idat(grey4(stamped)), width, height, 4, "/FlateDecode", parms)


def png(stamped: Image.Image, bilevel: bool, info: PngImagePlugin.PngInfo, dpi: float) -> bytes:
    """The page as a PNG: 1 bit for a bilevel source, 16 grey levels (4-bit palette) else."""
    out = io.BytesIO()
    image = one_bit(stamped) if bilevel else grey4(stamped)
    image.save(out, "PNG", pnginfo=info, dpi=(dpi, dpi), bits=1 if bilevel else 4)
    return out.getvalue()


def one_bit(stamped: Image.Image) -> Image.Image:
    """Ink stays ink; the light greys of the mark become a line screen, one row in four."""
    page = np.asarray(stamped)
    limit = np.full((page.shape[0], 1), _INK, dtype=np.uint8)
    limit[::_SCREEN_ROWS] = _LIGHT
    return Image.fromarray(np.where(page < limit, 0, 255).astype(np.uint8)).convert("1")


def grey4(stamped: Image.Image) -> Image.Image:
    """16 grey levels as a palette image whose index is the level (0 black, 15 white)."""
    levels = stamped.point(_TO_LEVEL)
    image = Image.frombytes("P", stamped.size, levels.tobytes())
    image.putpalette(_GREY4)
    return image


def place(page: pikepdf.Page, image: PageImage) -> None:
    """Swap the page's one image for ``image``: same placement, new pixels."""
    found = [obj for obj in page.obj.Resources.XObject.values() if obj.Subtype == "/Image"]
    if len(found) != 1:
        raise ValueError("a released page holds exactly one image")
    stream = found[0]
    for key in ("/DecodeParms", "/Decode", "/SMask", "/Interpolate"):
        if key in stream:
            del stream[key]
    parms = pikepdf.Dictionary({f"/{k}": v for k, v in image.parms.items()})
    stream.write(image.data, filter=pikepdf.Name(image.filter), decode_parms=parms or None)
    stream.Width, stream.Height = image.width, image.height
    stream.BitsPerComponent = image.bits
    stream.ColorSpace = pikepdf.Name.DeviceGray


def _g4(image: Image.Image) -> bytes:
    """CCITT Group 4 data of a 1-bit image: libtiff's, one strip, without the TIFF around it."""
    out = io.BytesIO()
    image.save(out, "TIFF", compression="group4", strip_size=-(-image.width // 8) * image.height)
    out.seek(0)
    with TiffImagePlugin.TiffImageFile(out) as tiff:
        (offset,), (length,) = tiff.tag_v2[273], tiff.tag_v2[279]  # StripOffsets, ...ByteCounts
    return out.getvalue()[offset : offset + length]


def _idat(image: Image.Image) -> bytes:
    """A PNG's compressed pixels (zlib with PNG predictors), as PDF's Flate filter reads them."""
    out = io.BytesIO()
    image.save(out, "PNG", bits=4, compress_level=8)  # 9: 1 % smaller at 2.5x the time
    data, pos, found = out.getvalue(), 8, bytearray()
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"IDAT":
            found += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return bytes(found)
