"""The suite's own schedule: the longest files first, as tests/conftest.py says."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import _LONGEST_FIRST

REPO = Path(__file__).resolve().parents[1]


def test_the_longest_first_table_names_files_that_exist() -> None:
    """A renamed or deleted file would silently drop out of the order."""
    missing = [path for path in _LONGEST_FIRST if not (REPO / path).is_file()]
    assert missing == []
    assert len(set(_LONGEST_FIRST)) == len(_LONGEST_FIRST)


def test_make_test_keeps_the_order_xdist_would_reorder() -> None:
    """xdist's default reorder (files with most tests first) would undo the table."""
    recipe = next(
        line for line in (REPO / "Makefile").read_text().splitlines() if "--dist loadfile" in line
    )
    assert "--no-loadscope-reorder" in recipe
