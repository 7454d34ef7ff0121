"""Property: mangled documents end in a verdict, never an unexpected exception.

``inspect_path`` runs in-process here (fast); the bounds of the child process
are tested in ``test_validation.py``. Seeds are tiny good files made with
Pillow, then truncated, bit-flipped, spliced or replaced by noise behind a magic.
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from activities.inspect.inspection import Inspection, inspect_path
from custody.errors import REJECT_CODES, DocumentRejected
from custody.settings import Limits

LIMITS = Limits(max_pages=3, max_page_pixels=250_000, max_image_pixels=250_000, ocr_dpi=72)
MEDIA = {"application/pdf", "image/png", "image/jpeg", "image/tiff"}
MAGICS = [b"%PDF-1.4\n", b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0", b"II*\x00", b"MM\x00+"]


def _save(frames: list[Image.Image], fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    # Copies: Pillow keeps the last save's options on the image object.
    frames = [frame.copy() for frame in frames]
    frames[0].save(buffer, fmt, save_all=len(frames) > 1, append_images=frames[1:], **options)
    return buffer.getvalue()


@cache
def seeds() -> dict[str, bytes]:
    """Small valid files in every accepted format, each one a page or two."""
    gray = Image.linear_gradient("L").resize((40, 30))
    rgb = Image.merge("RGB", (gray, gray.transpose(Image.Transpose.FLIP_LEFT_RIGHT), gray))
    ink = gray.point(lambda v: 255 if v > 128 else 0).convert("1")
    return {
        "png": _save([gray], "PNG"),
        "jpeg": _save([rgb], "JPEG", quality=70),
        "tiff": _save([gray, rgb], "TIFF", compression="tiff_adobe_deflate"),
        "tiff_g4": _save([ink], "TIFF", compression="group4"),
        "pdf": _save([rgb, gray], "PDF", resolution=72.0),
    }


@st.composite
def mangled(draw: st.DrawFn) -> bytes:
    """A seed cut short, with flipped bits, spliced with another, or noise behind a magic."""
    seed = seeds()[draw(st.sampled_from(sorted(seeds())))]
    how = draw(st.sampled_from(["truncate", "flip", "splice", "noise"]))
    if how == "truncate":
        return seed[: draw(st.integers(0, len(seed) - 1))]
    if how == "noise":
        return draw(st.sampled_from(MAGICS)) + draw(st.binary(max_size=512))
    if how == "splice":
        other = seeds()[draw(st.sampled_from(sorted(seeds())))]
        cut = draw(st.integers(1, len(seed) - 1))
        return seed[:cut] + other[draw(st.integers(0, len(other) - 1)) :]
    data = bytearray(seed)
    for position in draw(st.lists(st.integers(0, len(data) * 8 - 1), min_size=1, max_size=8)):
        data[position // 8] ^= 1 << (position % 8)
    return bytes(data)


def assert_within_rules(found: Inspection) -> None:
    assert found.media_type in MEDIA
    assert 1 <= found.pages <= LIMITS.max_pages
    assert 1 <= found.max_page_pixels <= LIMITS.max_page_pixels


@pytest.mark.parametrize("name", sorted(seeds()))
def test_seed_accepted(name: str, tmp_path: Path) -> None:
    """Every unmangled seed passes, so the property below starts from good files."""
    path = tmp_path / "seed"
    path.write_bytes(seeds()[name])
    assert_within_rules(inspect_path(path, LIMITS))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=mangled())
def test_inspect_path_mangled_input_ends_in_verdict(data: bytes, tmp_path: Path) -> None:
    """Any mangled input is either accepted within the limits or rejected with a reject code."""
    path = tmp_path / "doc"  # one file, rewritten by each example
    path.write_bytes(data)
    try:
        found = inspect_path(path, LIMITS)
    except DocumentRejected as refused:
        assert refused.code in REJECT_CODES
    else:
        assert_within_rules(found)
