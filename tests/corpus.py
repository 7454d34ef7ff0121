"""Where the research corpus is (``../shared/corpus`` beside the repository, or
``CUSTODY_CORPUS``), and a corpus page read as the engines get it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.pages.raster import GrayPage, iter_pages

CORPUS = Path(
    os.environ.get("CUSTODY_CORPUS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
)


def corpus_page(path: Path, media_type: str) -> GrayPage:
    """The one page of a corpus scan, rendered at 200 dpi."""
    if not path.is_file():
        pytest.fail(f"research corpus not found at {CORPUS}; set CUSTODY_CORPUS")
    [(_, image)] = list(iter_pages(path, media_type, dpi=200))
    return image


def truth(path: Path) -> str:
    """A corpus scan's ground-truth text, beside it."""
    return path.with_suffix(".txt").read_text(encoding="utf-8")
