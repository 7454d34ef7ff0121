"""How a drawn referral is written for the benches: its pages, and its truth beside them.

Shared by both referral generators (``starter.bench.referrals`` and
``starter.bench.referrals_b``), which share nothing else: layouts, wordings,
fonts and values are each their own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image


def write_referral(
    out: Path,
    stem: str,
    pages: list[Image.Image],
    truth: Mapping[str, str | bool | None],
    meta: dict[str, str],
    png_info: dict[str, Any] | None = None,
) -> Path:
    """One referral as PNG (one page, saved with ``png_info``) or PDF (several, 200 dpi),
    beside ``<stem>.fields.json`` (its truth and how it was drawn)."""
    if len(pages) == 1:
        path = out / f"{stem}.png"
        pages[0].save(path, **(png_info or {}))
    else:
        path = out / f"{stem}.pdf"
        pages[0].save(path, save_all=True, append_images=pages[1:], resolution=200.0)
    record = {"type": "referral", "fields": truth, "drawn": meta}
    (out / f"{stem}.fields.json").write_text(json.dumps(record, indent=1, sort_keys=True))
    return path
