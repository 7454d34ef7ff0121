"""The Tesseract helper process: libtesseract kept loaded, against the real binary.

Real libtesseract 5.3 and the real ``tesseract`` binary on corpus pages. The
one stand-in is a fake helper that answers its start and then never answers a
page, to inject a hang that Tesseract's own deadline cannot catch; that test
says so.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import numpy as np
import pytest
from PIL import Image

import activities.engines.tess_server as ts
from activities.engines.selection import build_engine, give_cores
from activities.engines.tess_server import HelperError, TesseractHelper
from activities.engines.tesseract import TesseractEngine, _run_tesseract, tesseract_info
from activities.pages.raster import GrayPage, iter_pages
from custody.cpus import CpuPlan
from custody.settings import Settings
from tests.corpus import CORPUS

PAGES = [  # a clean test page, a ~100-dpi form (upscaled as the engine does), a receipt
    ("tess_phototest.tif", "image/tiff", 1),
    ("funsd_82562350.png", "image/png", 2),
    ("sroie_022.jpg", "image/jpeg", 1),
]


def _gray(name: str, media_type: str, scale: int) -> GrayPage:
    """The page as the engine hands it over: 8-bit gray at its own size."""
    path = CORPUS / "ocr_gt" / name
    if not path.is_file():
        pytest.fail(f"research corpus page {path} not found; set CUSTODY_CORPUS")
    [(_, image)] = list(iter_pages(path, media_type, dpi=200))
    return np.asarray(Image.fromarray(image).convert("L"), dtype=np.uint8)


def _upscaled(gray: GrayPage, scale: int) -> GrayPage:
    """What the binary was given before the helper did the upscaling itself."""
    height, width = gray.shape
    size = (width * scale, height * scale)
    return np.asarray(Image.fromarray(gray).resize(size, Image.Resampling.LANCZOS), np.uint8)


@pytest.fixture(scope="module")
def helper() -> TesseractHelper:
    _, tessdata = tesseract_info()
    return TesseractHelper(str(tessdata), "eng", 3, 3)


@pytest.mark.parametrize(("name", "media_type", "scale"), PAGES)
def test_helper_tsv_is_byte_identical_to_the_binary(
    helper: TesseractHelper, name: str, media_type: str, scale: int
) -> None:
    """The kept-loaded library reads a page exactly as the ``tesseract`` binary does."""
    gray = _gray(name, media_type, scale)
    big = _upscaled(gray, scale) if scale != 1 else gray
    _, tessdata = tesseract_info()
    height, width = big.shape
    pgm = f"P5 {width} {height} 255\n".encode() + big.tobytes()
    args = ["stdin", "stdout", "--tessdata-dir", str(tessdata), "-l", "eng"]
    binary = _run_tesseract([*args, "--psm", "3", "--oem", "3", "tsv"], pgm, 300.0)
    kept = helper.tsv(gray, 300.0, scale)  # the helper upscales the form itself
    assert kept.count("\n") > 20  # words were read, not an empty page
    assert kept.splitlines() == binary.splitlines()[1:]  # the binary adds a header row


def test_helper_killed_mid_page_fails_that_page_only(helper: TesseractHelper) -> None:
    """A helper that dies during a page costs that page a clear error, not the worker;
    one found dead between pages is replaced before the next page."""
    small, slow = _gray(*PAGES[0]), _gray(*PAGES[1])  # the form, upscaled, takes ~1.5 s
    first = helper.tsv(small, 60.0)
    proc = helper._proc
    assert proc is not None
    threading.Timer(0.3, os.kill, (proc.pid, signal.SIGKILL)).start()
    with pytest.raises(HelperError, match="lost a page: helper exited"):
        helper.tsv(slow, 60.0, 2)
    assert helper._proc is None and proc.poll() == -signal.SIGKILL
    assert helper.tsv(small, 60.0) == first
    between = helper._proc
    assert between is not None
    os.kill(between.pid, signal.SIGKILL)
    between.wait()
    assert helper.tsv(small, 60.0) == first
    assert helper._proc is not None and helper._proc.pid != between.pid


def test_page_past_its_deadline_fails_and_the_helper_lives_on(helper: TesseractHelper) -> None:
    """Tesseract's monitor cancels a page past its deadline; the same helper reads the next."""
    gray = _gray(*PAGES[1])
    with pytest.raises(HelperError, match="deadline"):
        helper.tsv(gray, 0.001, 2)
    pid = helper._proc.pid if helper._proc else None
    assert helper.tsv(_gray(*PAGES[0]), 60.0).count("\n") > 20
    assert helper._proc is not None and helper._proc.pid == pid


def test_unanswering_helper_is_killed_after_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hang outside Tesseract's deadline checks: the helper is killed, the page fails.

    Stand-in (the injected fault): a helper that answers its start, then sleeps.
    """
    monkeypatch.setattr(ts, "_KILL_GRACE_S", 0.5)
    fake = TesseractHelper("unused", "eng", 3, 3)
    start_frame = "import os, struct, time; os.write(1, struct.pack('<BI', 0, 4) + b'fake')"
    fake._argv = [sys.executable, "-c", start_frame + "; time.sleep(600)"]
    assert fake.start() == "fake"
    proc = fake._proc
    assert proc is not None
    with pytest.raises(HelperError, match="no answer before the page deadline"):
        fake.tsv(np.zeros((8, 8), dtype=np.uint8), 0.2)
    assert proc.poll() is not None and fake._proc is None


def test_helper_that_cannot_load_its_language_says_so() -> None:
    """A missing traineddata fails at start with the library's complaint."""
    broken = TesseractHelper("/nonexistent-tessdata", "eng", 3, 3)
    with pytest.raises(HelperError, match="did not start.*could not load 'eng'"):
        broken.start()


def test_engine_keeps_one_helper_per_concurrent_page() -> None:
    """Two pages at once get two helpers, reused afterwards, with the sequential result."""
    engine = TesseractEngine(torch_threads=1)
    image = _gray(*PAGES[0])
    alone = engine.recognise(image, 0)
    read: list[str] = []
    barrier = threading.Barrier(2)

    def page() -> None:
        barrier.wait()
        read.append(engine.recognise(image, 0).text)

    threads = [threading.Thread(target=page) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert read == [alone.text, alone.text]
    assert len(engine._helpers) == 2
    pids = {h._proc.pid for h in engine._helpers if h._proc is not None}
    engine.recognise(image, 0)
    engine.recognise(image, 0)
    assert {h._proc.pid for h in engine._helpers if h._proc is not None} == pids


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pinning needs two CPUs")
def test_engine_pins_its_helpers_and_a_restarted_one_stays_pinned() -> None:
    """``pin`` moves running helpers to the engine's core; a replacement starts there too."""
    engine = TesseractEngine(torch_threads=1)
    image = _gray(*PAGES[0])
    engine.recognise(image, 0)
    [helper] = engine._helpers
    assert helper._proc is not None
    cpu = max(os.sched_getaffinity(0))
    engine.pin((cpu,))
    assert os.sched_getaffinity(helper._proc.pid) == {cpu}
    os.kill(helper._proc.pid, signal.SIGKILL)
    helper._proc.wait()
    engine.recognise(image, 0)  # starts a fresh helper
    assert helper._proc is not None and os.sched_getaffinity(helper._proc.pid) == {cpu}


def test_helper_that_fails_to_start_leaves_no_descriptor_open() -> None:
    """Each failed start reaps its process and closes both of its pipes, at once:
    not later, when the garbage collector happens to drop the errors' frames."""
    broken = TesseractHelper("/nonexistent-tessdata", "eng", 3, 3)
    before = len(os.listdir("/proc/self/fd"))
    kept = []  # the errors, with their tracebacks' frames, stay alive
    for _ in range(3):
        with pytest.raises(HelperError, match="did not start") as failed:
            broken.start()
        kept.append(failed)
    assert len(os.listdir("/proc/self/fd")) == before and broken._proc is None


def test_give_cores_pins_only_a_pure_tesseract_engine() -> None:
    """The hybrid engine's EasyOCR runs in the worker: its cores are not given away."""
    plan = CpuPlan(engine=(max(os.sched_getaffinity(0)),), rest=frozenset())
    hybrid = build_engine(Settings(ocr_engine="hybrid", torch_threads=1), warm=False)
    assert give_cores(hybrid, plan) is False
    engine = TesseractEngine(torch_threads=1)
    assert give_cores(engine, plan) is True and engine._cpus == plan.engine
