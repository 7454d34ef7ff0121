"""The PP-OCRv6 engine (``rapidocr`` on onnxruntime) on real corpus pages.

Real rapidocr 3.10 with the models its wheel ships; no stand-ins. Thresholds
were measured on the 2-core dev box (2026-11-30) and set with margin:
phototest word F1 measured 1.000 (asserted >= 0.95), FUNSD 82092117 0.82
(asserted >= 0.70), SROIE 145 0.94 (asserted >= 0.85).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from activities.engines.rapid import RapidOcrEngine
from activities.engines.rapid_models import MODEL_LICENCE, MODELS, cuda_available
from activities.engines.rapid_words import line_words
from activities.engines.selection import build_recorded, configured_engine, describe, give_cores
from activities.pages.searchable import searchable_pdf
from custody.cpus import CpuPlan
from custody.errors import ConfigurationError, HelperError
from custody.models import PageText
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry
from custody.stores.local import LocalStore
from starter.bench.textmetrics import word_f1
from tests.corpus import CORPUS, corpus_page, truth

PHOTOTEST = CORPUS / "ocr_gt" / "tess_phototest.tif"
FORM = CORPUS / "ocr_gt" / "funsd_82092117.png"
RECEIPT = CORPUS / "ocr_gt" / "sroie_145.jpg"


@pytest.fixture(scope="module")
def engine() -> Iterator[RapidOcrEngine]:
    built = RapidOcrEngine(1, device="cpu")
    yield built
    built.close()


@pytest.fixture(scope="module")
def phototest_page(engine: RapidOcrEngine) -> PageText:
    return engine.recognise(corpus_page(PHOTOTEST, "image/tiff"), 0)


def test_rapid_engine_phototest_words_boxes_and_confidences(phototest_page: PageText) -> None:
    """Every word has text, a confidence in (0, 1] and a box inside the page; the text scores."""
    page = phototest_page
    assert word_f1(page.text, truth(PHOTOTEST)) >= 0.95
    assert len(page.words) >= 50 and all(" " not in w.text for w in page.words)
    for word in page.words:
        assert 0.0 < word.confidence <= 1.0 and len(word.box) == 4
        assert all(0 <= x <= page.width and 0 <= y <= page.height for x, y in word.box)
        assert word.box[0][0] < word.box[1][0] and word.box[0][1] < word.box[3][1]
    assert 0.9 <= page.mean_confidence <= 1.0


@pytest.mark.parametrize(("path", "floor"), [(FORM, 0.70), (RECEIPT, 0.85)])
def test_rapid_engine_reads_forms_and_receipts(
    engine: RapidOcrEngine, path: Path, floor: float
) -> None:
    """A FUNSD form and an SROIE receipt are read at the measured word F1, less a margin."""
    media = "image/png" if path.suffix == ".png" else "image/jpeg"
    page = engine.recognise(corpus_page(path, media), 0)
    assert word_f1(page.text, truth(path)) >= floor


def test_rapid_engine_words_make_a_searchable_pdf(phototest_page: PageText) -> None:
    """The searchable PDF built from its words carries them as a text layer."""
    pdf = pdfium.PdfDocument(
        searchable_pdf([(corpus_page(PHOTOTEST, "image/tiff"), phototest_page)], 200)
    )
    text = pdf[0].get_textpage().get_text_range()
    assert word_f1(text, truth(PHOTOTEST)) >= 0.95


def test_rapid_engine_reads_an_upside_down_page(engine: RapidOcrEngine) -> None:
    """Orientation is decided per page: a page turned 180 degrees is read, boxes in its pixels."""
    turned = np.ascontiguousarray(corpus_page(PHOTOTEST, "image/tiff")[::-1, ::-1])
    page = engine.recognise(turned, 0)
    assert word_f1(page.text, truth(PHOTOTEST)) >= 0.95
    assert page.text.startswith("This is a lot")  # in reading order, not the page's pixel order
    first = next(w for w in page.words if w.text == "This")
    # "This" opens the page: turned over, it sits at the bottom right.
    assert first.box[0][0] > page.width / 2 and first.box[0][1] > page.height / 2


def test_rapid_engine_records_models_licence_and_device(engine: RapidOcrEngine) -> None:
    """Every result names the reviewed model files by sha256, their licence, and the device."""
    hashes = engine.model_hashes()
    assert hashes == {file: sha for file, sha in MODELS.values()}
    params = engine.params()
    assert params["model_licence"] == MODEL_LICENCE and "Apache-2.0" in MODEL_LICENCE
    assert params["device"] == "cpu" and params["orientation"] is True
    assert engine.version.startswith("rapidocr3.")


def test_rapid_engine_refuses_a_changed_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model file other than the reviewed one stops the engine at start."""
    det_file, _ = MODELS["det"]
    monkeypatch.setitem(MODELS, "det", (det_file, "0" * 64))
    with pytest.raises(ConfigurationError, match="not the reviewed one"):
        RapidOcrEngine(1, device="cpu").model_hashes()


def test_rapid_engine_names_every_model_by_path(engine: RapidOcrEngine) -> None:
    """Each model is loaded from the wheel by explicit path, so rapidocr never downloads one."""
    config = engine._config()
    for kind in ("Det", "Rec", "Cls"):
        path = Path(config[f"{kind}.model_path"])
        assert path.is_file() and path.parent.name == "models"


def test_rapid_engine_starts_with_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every proxy pointing nowhere and HOME empty, a helper still starts and reads."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("HOME", "/nonexistent")
    offline = RapidOcrEngine(1, device="cpu")
    try:
        page = offline.recognise(corpus_page(PHOTOTEST, "image/tiff"), 0)
    finally:
        offline.close()
    assert word_f1(page.text, truth(PHOTOTEST)) >= 0.95


def test_rapid_engine_page_past_its_deadline_is_cancelled_and_the_next_reads() -> None:
    """A page past its deadline fails (its helper killed); the same engine reads the next page."""
    image = corpus_page(FORM, "image/png")
    engine = RapidOcrEngine(1, device="cpu", timeout_s=0.05)
    try:
        engine.warm_up()
        with pytest.raises(HelperError, match="deadline"):
            engine.recognise(image, 0)
        engine.tuning = dataclasses.replace(engine.tuning, timeout_s=300.0)
        page = engine.recognise(corpus_page(PHOTOTEST, "image/tiff"), 1)
    finally:
        engine.close()
    assert word_f1(page.text, truth(PHOTOTEST)) >= 0.95


def test_build_recorded_rebuilds_the_rapid_engine_a_result_names(engine: RapidOcrEngine) -> None:
    """A recorded configuration (pin or rollback) rebuilds the same tuning and model files."""
    tuned = RapidOcrEngine(1, device="cpu", det_max_side=1280, rec_batch_num=8)
    config = describe(tuned)
    rebuilt = build_recorded(config.engine, config.params, 1, warm=False, device="cpu")
    assert isinstance(rebuilt, RapidOcrEngine)
    assert describe(rebuilt) == config and rebuilt.tuning.det_max_side == 1280


def test_rapid_engine_keeps_batched_lines_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA the measured batches of 6 at RapidOCR's 320 px floor; on CPU one line alone.

    A stand-in says CUDA is offered (no GPU here); nothing is started on it.
    """
    monkeypatch.setattr("activities.engines.rapid.cuda_available", lambda: True)
    gpu = RapidOcrEngine(1, device="cuda")
    assert (gpu.tuning.rec_batch_num, gpu.tuning.rec_min_width) == (6, 320)
    assert RapidOcrEngine(1, device="cuda", rec_batch_num=2).tuning.rec_batch_num == 2
    cpu = RapidOcrEngine(1, device="cpu")
    assert (cpu.tuning.rec_batch_num, cpu.tuning.rec_min_width) == (1, 48)


def test_build_recorded_reads_an_older_result_as_it_was_read() -> None:
    """A result recorded before ``rec_min_width`` existed ran with RapidOCR's 320 px floor."""
    params = describe(RapidOcrEngine(1, device="cpu")).params
    older = {k: v for k, v in params.items() if k != "rec_min_width"}
    rebuilt = build_recorded("rapidocr", older, 1, warm=False, device="cpu")
    assert isinstance(rebuilt, RapidOcrEngine) and rebuilt.tuning.rec_min_width == 320
    current = build_recorded("rapidocr", params, 1, warm=False, device="cpu")
    assert isinstance(current, RapidOcrEngine) and current.tuning.rec_min_width == 48


def test_give_cores_pins_the_rapid_helpers() -> None:
    """On the CPU, PP-OCR's helpers take the plan's cores, one helper per core."""
    plan = CpuPlan(engine=(max(os.sched_getaffinity(0)),), rest=frozenset())
    engine = RapidOcrEngine(1, device="cpu")
    try:
        assert give_cores(engine, plan) is True
        engine.warm_up()
        proc = engine._made[0]._proc
        assert proc is not None and os.sched_getaffinity(proc.pid) == set(plan.engine)
    finally:
        engine.close()


def test_detector_side_is_chosen_per_page(engine: RapidOcrEngine) -> None:
    """A long page is detected with its long side capped; a small one with its short side raised."""
    from activities.engines.rapid_wire import LIMIT_MAX, LIMIT_MIN

    assert engine.detector_side(1700, 2200) == (engine.tuning.det_max_side, LIMIT_MAX)
    assert engine.detector_side(640, 480) == (engine.tuning.det_min_side, LIMIT_MIN)


def test_line_words_split_a_line_in_proportion() -> None:
    """A line without word boxes is split on spaces, each box its share of the line's quad."""
    quad = [[0.0, 0.0], [100.0, 0.0], [100.0, 10.0], [0.0, 10.0]]
    words = line_words(quad, "ab cdefg", 0.8)
    assert [w for w, _, _ in words] == ["ab", "cdefg"]
    assert words[0][2] == [[0.0, 0.0], [25.0, 0.0], [25.0, 10.0], [0.0, 10.0]]
    assert words[1][2][0] == [37.5, 0.0] and words[1][1] == 0.8


def test_helper_boxes_a_lines_words_to_their_ink() -> None:
    """The helper sends words boxed tight: a line without word boxes is split, each box shrunk."""
    from activities.engines.rapid_reader import boxed

    gray = np.full((40, 200), 255, dtype=np.uint8)
    gray[12:28, 10:50] = 0  # "ab": ink at x 10-49, y 12-27
    gray[14:26, 80:180] = 0  # "cdefg"
    quad = [[0.0, 0.0], [200.0, 0.0], [200.0, 40.0], [0.0, 40.0]]
    _, text, _, words = boxed(gray, (quad, "ab cdefg", 0.8, []))
    assert text == "ab cdefg" and [w for w, _, _ in words] == ["ab", "cdefg"]
    assert words[0][2] == [[10.0, 12.0], [50.0, 12.0], [50.0, 28.0], [10.0, 28.0]]
    assert words[1][2][0] == [80.0, 14.0] and words[1][1] == 0.8


@pytest.mark.skipif(not cuda_available(), reason="needs onnxruntime's CUDA provider and a GPU")
def test_rapid_engine_runs_on_cuda_when_offered() -> None:
    """With a GPU, ``auto`` picks CUDA, the helper really runs on it, and the result says so."""
    gpu = RapidOcrEngine(1, device="auto")
    try:
        gpu.warm_up()
        page = gpu.recognise(corpus_page(PHOTOTEST, "image/tiff"), 0)
        assert "CUDAExecutionProvider" in gpu._made[0].runtime["providers"]
    finally:
        gpu.close()
    assert gpu.params()["device"] == "cuda"
    assert word_f1(page.text, truth(PHOTOTEST)) >= 0.95


def test_rapid_worker_rolls_back_to_the_pinned_configuration(tmp_path: Path) -> None:
    """After a rollback, a worker set to rapidocr rebuilds the pinned tuning, not its settings'."""
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    settings = Settings(home=tmp_path, ocr_engine="rapidocr", ocr_device="cpu", torch_threads=1)
    known_good = describe(configured_engine(settings, registry, "w"))
    changed = known_good.model_copy(update={"params": {**known_good.params, "det_max_side": 640}})
    registry.observe(changed, "w")  # as if a new release had changed the tuning
    previous = registry.previous()
    assert previous is not None and previous.config == known_good
    registry.pin(previous, "operator", "forms regressed")
    engine = configured_engine(settings, registry, "w")
    assert isinstance(engine, RapidOcrEngine)
    assert engine.params()["det_max_side"] == known_good.params["det_max_side"] != 640
    assert describe(engine) == known_good
    engine.close()


def test_rapid_engine_without_the_orientation_check_reads_pages_as_they_lie() -> None:
    """With ``orientation`` off, an upside-down page is not turned: the setting is honoured."""
    turned = np.ascontiguousarray(corpus_page(PHOTOTEST, "image/tiff")[::-1, ::-1])
    engine = RapidOcrEngine(1, device="cpu", orientation=False)
    try:
        page = engine.recognise(turned, 0)
    finally:
        engine.close()
    assert word_f1(page.text, truth(PHOTOTEST)) < 0.5
