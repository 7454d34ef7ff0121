"""The batched PP-OCRv6 engine on real corpus pages, against the lane engine it must equal.

Real rapidocr models in real onnxruntime, real helper processes; no stand-ins.
The degenerate page in the isolation test is an injected fault (a 1 x 0 image
no rasteriser makes), said so there. Tests that need CUDA skip without it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activities.engines.batched.engine import BatchedRapidEngine
from activities.engines.batched.tuning import BatchTuning
from activities.engines.rapid import RapidOcrEngine
from activities.engines.rapid_models import cuda_available
from activities.engines.selection import build_engine, configured_engine, describe
from activities.pages.raster import GrayPage
from custody.errors import ConfigurationError, HelperError
from custody.models import PageText
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry
from custody.stores.local import LocalStore
from starter.bench.ocr import documents
from starter.bench.textmetrics import word_f1

# The corpus fixtures read 22 pages twice: minutes on a shared 2-core box.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

Docs = dict[str, list[GrayPage]]
Read = dict[str, list[PageText]]
_ONE_FORM = "funsd_82092117.png"


@pytest.fixture(scope="module")
def docs(corpus: Path) -> Docs:
    """Every corpus document's pages, as the OCR activity rasterises them (200 dpi)."""
    from starter.bench.ocr import _pages

    found = documents(corpus / "ocr_gt", None)
    return {p.name: [img for _, img in _pages(p, 200)] for p in found}


@pytest.fixture(scope="module")
def truth(corpus: Path, docs: Docs) -> dict[str, str]:
    gt = corpus / "ocr_gt"
    return {name: (gt / name).with_suffix(".txt").read_text(encoding="utf-8") for name in docs}


def _f1_deltas(a: Read, b: Read, truth: dict[str, str]) -> dict[str, float]:
    """Per document, how far apart two readings' word F1 against the ground truth are."""
    return {
        name: abs(
            word_f1("\n".join(p.text for p in a[name]), truth[name])
            - word_f1("\n".join(p.text for p in b[name]), truth[name])
        )
        for name in truth
    }


@pytest.fixture(scope="module")
def lanes(docs: Docs) -> Read:
    """The lane engine's reading of every page: the CPU path the batched one must equal."""
    engine = RapidOcrEngine(1, device="cpu")
    try:
        return _read(engine, docs, in_flight=2)
    finally:
        engine.close()


@pytest.fixture(scope="module")
def batched(docs: Docs) -> Iterator[tuple[BatchedRapidEngine, Read, dict[str, Any]]]:
    """The batched engine on the CPU: four documents in flight, two helpers, eight pages a call."""
    engine = BatchedRapidEngine(1, device="cpu", batch=BatchTuning(pages=8, streams=2))
    try:
        engine.warm_up()
        engine.take_stats()
        read = _read(engine, docs, in_flight=4)
        yield engine, read, engine.take_stats()
    finally:
        engine.close()


def _read(engine: Any, docs: Docs, in_flight: int) -> Read:
    """Each document's pages in order, ``in_flight`` documents at once (as OCR activities do)."""

    def one(name: str) -> list[PageText]:
        return [engine.recognise(page, n) for n, page in enumerate(docs[name])]

    with ThreadPoolExecutor(in_flight) as pool:
        return dict(zip(docs, pool.map(one, docs), strict=True))


def _boxed(page: PageText) -> list[tuple[str, list[list[int]]]]:
    return [(w.text, w.box) for w in page.words]


def _confidences(page: PageText) -> list[float]:
    return [w.confidence for w in page.words]


def _same(page: PageText, lane: PageText) -> bool:
    """Same words in the same boxes, confidences within 1e-4 (see the corpus test)."""
    close = _confidences(page) == pytest.approx(_confidences(lane), abs=1e-4)
    return _boxed(page) == _boxed(lane) and bool(close)


def test_batched_engine_reads_every_corpus_document_as_the_lane_engine(
    docs: Docs,
    lanes: Read,
    batched: tuple[BatchedRapidEngine, Read, dict[str, Any]],
    truth: dict[str, str],
) -> None:
    """Word F1 within 0.002 of the lane engine's on every document; every word and box the
    same, every confidence within 1e-4 (measured: 2 of unlv_8071_093.3B's 646 words differ
    by 1e-5, lines of one width recognised in one call rounding apart)."""
    _, read, _ = batched
    assert max(_f1_deltas(read, lanes, truth).values()) <= 0.002
    for name in docs:
        assert [_boxed(p) for p in read[name]] == [_boxed(p) for p in lanes[name]], name
        got = [c for p in read[name] for c in _confidences(p)]
        assert got == pytest.approx([c for p in lanes[name] for c in _confidences(p)], abs=1e-4)


def test_batched_engine_shares_calls_across_documents(
    batched: tuple[BatchedRapidEngine, Read, dict[str, Any]], docs: Docs
) -> None:
    """Pages of several documents went into one batch, and lines of a batch into shared calls."""
    _, _, stats = batched
    pages = sum(len(p) for p in docs.values())
    assert stats["pages"] == pages and stats["failed"] == 0
    assert max(int(size) for size in stats["sizes"]) > 1
    counts = stats["counts"]
    assert counts["det_calls"] < pages and counts["rec_calls"] < counts["lines"]


def test_batched_engine_records_device_provider_and_batch_settings(
    batched: tuple[BatchedRapidEngine, Read, dict[str, Any]],
) -> None:
    """Each result's params say where and how it was read, beside the lane engine's tuning."""
    engine, read, _ = batched
    params = describe(engine).params
    assert params["device"] == "cpu" and params["provider"] == "cpu"
    assert params["batch_pages"] == 8 and params["batch_streams"] == 2
    assert params["batch_line_px"] == 1 and params["batch_det_px"] == 32
    assert params["rec_batch_num"] == 1 and params["rec_min_width"] == 48
    assert engine.runtimes()[0]["providers"] == ["CPUExecutionProvider"]


def test_columns_taken_on_the_host_read_as_the_ctc_head(docs: Docs, lanes: Read) -> None:
    """Without IOBinding (numpy takes each column's best character) a page reads the same."""
    engine = BatchedRapidEngine(1, device="cpu", batch=BatchTuning(iobinding=False))
    try:
        page = engine.recognise(docs[_ONE_FORM][0], 0)
    finally:
        engine.close()
    assert _same(page, lanes[_ONE_FORM][0])


def test_a_bad_page_fails_alone_and_the_rest_of_its_batch_reads(docs: Docs, lanes: Read) -> None:
    """A batch that fails at once is read again page by page: only the bad page fails.

    The bad page is an injected fault: a 1 x 0 image, which no rasteriser makes.
    """
    engine = BatchedRapidEngine(1, device="cpu", batch=BatchTuning(wait_ms=500))
    good = docs[_ONE_FORM][0]
    bad = np.zeros((1, 0), dtype=np.uint8)
    outcomes: dict[int, object] = {}
    try:
        engine.warm_up()

        def read(n: int, image: GrayPage) -> None:
            try:
                outcomes[n] = engine.recognise(image, n)
            except HelperError as err:
                outcomes[n] = err

        threads = [threading.Thread(target=read, args=a) for a in ((0, good), (1, bad), (2, good))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = engine.take_stats()
    finally:
        engine.close()
    assert isinstance(outcomes[1], HelperError) and stats["failed"] >= 1
    for n in (0, 2):
        page = outcomes[n]
        assert isinstance(page, PageText) and _same(page, lanes[_ONE_FORM][0])


def test_a_batch_past_its_deadline_is_cancelled_and_the_next_reads(docs: Docs) -> None:
    """Past the page deadline the helper is killed and the pages fail; the engine reads on."""
    engine = BatchedRapidEngine(1, device="cpu", timeout_s=0.05)
    try:
        engine.warm_up()
        with pytest.raises(HelperError, match="deadline"):
            engine.recognise(docs[_ONE_FORM][0], 0)
        engine.tuning = dataclasses.replace(engine.tuning, timeout_s=300.0)
        page = engine.recognise(docs["tess_phototest.tif"][0], 1)
    finally:
        engine.close()
    assert "quick brown dog" in page.text


def test_build_engine_batches_when_the_settings_ask(tmp_path: Path) -> None:
    """``CUSTODY_OCR_BATCH_PAGES`` builds the batched engine; a pinned configuration stays
    batched on such a worker, with the pinned tuning."""
    settings = Settings(home=tmp_path, ocr_batch_pages=4, ocr_device="cpu", torch_threads=1)
    engine = build_engine(settings, warm=False)
    assert isinstance(engine, BatchedRapidEngine) and engine.batch.pages == 4
    lanes = build_engine(Settings(home=tmp_path, ocr_device="cpu"), warm=False)
    assert not isinstance(lanes, BatchedRapidEngine)
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    entry = registry.observe(describe(RapidOcrEngine(1, device="cpu", det_max_side=1280)), "w")
    assert entry is not None
    registry.pin(entry, "operator", "a known-good tuning")
    rebuilt = configured_engine(settings, registry, "w")
    assert isinstance(rebuilt, BatchedRapidEngine)
    rebuilt.close()
    assert rebuilt.tuning.det_max_side == 1280


@pytest.mark.skipif(not cuda_available(), reason="needs onnxruntime's CUDA provider and a GPU")
@pytest.mark.parametrize("graphs", [False, True])
def test_batched_engine_on_cuda_reads_as_the_cpu_path(
    docs: Docs, lanes: Read, truth: dict[str, str], graphs: bool
) -> None:
    """On CUDA (IOBinding; CUDA graphs too) every document's F1 is within 0.002 of the CPU's."""
    batch = BatchTuning(pages=8, streams=2, cuda_graphs=graphs)
    engine = BatchedRapidEngine(1, device="cuda", batch=batch)
    try:
        engine.warm_up()
        read = _read(engine, docs, in_flight=4)
        assert "CUDAExecutionProvider" in engine.runtimes()[0]["providers"]
    finally:
        engine.close()
    assert engine.params()["device"] == "cuda" and engine.params()["cuda_tf32"] is False
    assert max(_f1_deltas(read, lanes, truth).values()) <= 0.002


@pytest.mark.skipif(not cuda_available(), reason="needs onnxruntime's CUDA provider and a GPU")
def test_batched_engine_on_tensorrt_reads_as_the_cpu_path(docs: Docs, lanes: Read) -> None:
    """Through onnxruntime's TensorRT provider (float32), a form reads as on the CPU."""
    engine = BatchedRapidEngine(1, device="cuda", gpu="tensorrt")
    try:
        try:
            engine.warm_up()
        except (ConfigurationError, HelperError) as err:  # provider listed, libraries absent
            pytest.skip(f"TensorRT's libraries are not installed here: {type(err).__name__}")
        page = engine.recognise(docs[_ONE_FORM][0], 0)
    finally:
        engine.close()
    assert word_f1(page.text, lanes[_ONE_FORM][0].text) >= 0.998
