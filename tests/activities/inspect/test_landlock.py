"""Landlock in the inspection child: decoders need no path, and a kernel without it is named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import activities.inspect.untrusted as untrusted
from activities.inspect import landlock, sandboxed
from activities.inspect.inspection import ChildOrder
from activities.pages.raster import iter_pages
from custody.settings import Limits

OCR_GT = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "ocr_gt"
TWO_PAGE_PDF = OCR_GT / "funsdpdf_2pages_86220490_86328049.pdf"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="needs a kernel with Landlock")


@needs_landlock
@pytest.mark.parametrize("kind", ["render", "layers"])
def test_landlock_child_on_unprivileged_path_still_renders(kind: str) -> None:
    """Without root's empty root, Landlock's no-path ruleset leaves pdfium all it needs."""
    zygote = untrusted._Zygote(env={"CUSTODY_INSPECT_PROBE": "1"})  # honours probe_skip
    order = ChildOrder.model_validate(
        {"kind": kind, "limits": Limits(), "dpi": 72, "probe_skip": ["root"]}
    )
    reply: dict[str, object] = {}
    try:
        pages = list(sandboxed._pages(TWO_PAGE_PDF, order, reply, zygote))
    finally:
        zygote._stop()
    assert [index for index, _ in pages] == [0, 1]
    degraded = reply["degraded"]
    assert isinstance(degraded, list) and "no_uid_drop" in degraded
    assert "no_landlock" not in degraded
    if kind == "render":
        theirs = [image for _, image in iter_pages(TWO_PAGE_PDF, "application/pdf", 72)]
        ours = [image for _, image in pages if isinstance(image, np.ndarray)]
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_landlock_kernel_without_it_is_named_no_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    """ABI 0 (a stand-in for an old kernel) restricts nothing and says ``no_landlock``."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    assert landlock.restrict() == ["no_landlock"]
    assert Path(__file__).read_bytes()  # nothing was restricted in this process


@needs_landlock
@pytest.mark.parametrize(
    ("version", "codes"),
    [(1, ["no_landlock_net", "no_landlock_scope"]), (4, ["no_landlock_scope"]), (6, [])],
)
def test_landlock_older_abi_names_what_it_cannot_deny(version: int, codes: list[str]) -> None:
    """An older ABI (a stand-in for an older kernel) still locks files and names the gaps."""
    script = (
        "import ctypes; from activities.inspect import landlock\n"
        f"landlock.abi = lambda: {version}\n"
        "ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)\n"  # PR_SET_NO_NEW_PRIVS
        "print(','.join(landlock.restrict()))\n"
        "try:\n    open(landlock.__file__, 'rb')\n"
        "except PermissionError:\n    print('refused')\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [",".join(codes), "refused"]
