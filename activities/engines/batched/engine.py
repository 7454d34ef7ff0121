"""PP-OCRv6 in batches across pages and lines: the engine a GPU OCR worker runs.

The same engine as ``activities.engines.rapid.RapidOcrEngine`` (its name,
models, hashes, licence and tuning; every page reads as it reads there) with
one difference: a page goes to the process's ``Batcher`` rather than to a
lane's helper, so pages of every document in flight share detector and
recogniser calls. The tuning is the CPU lane engine's on every device, not
the old CUDA batches of six lines padded to 320 px: the text must be the
CPU path's (``f1_delta_max`` in ``custody bench ocr --device``), and the
batches across pages are what a GPU gains from.

``params()`` adds the batch settings (``batch_*``), the provider and whether
TF32 is on, so a result says how it was read.
"""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from activities.engines.base import ParamValue
from activities.engines.batched.batcher import Batcher
from activities.engines.batched.server import BatchHelper
from activities.engines.batched.tuning import BatchTuning, Provider
from activities.engines.rapid import RapidOcrEngine, RapidTuning
from activities.engines.rapid_wire import Line
from activities.pages.raster import GrayPage
from custody.errors import ConfigurationError

_PROVIDER_NAMES = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
}


class BatchedRapidEngine(RapidOcrEngine):
    """PP-OCRv6 read through a batcher and ``batch.streams`` helper processes."""

    def __init__(
        self,
        threads: int,
        *,
        device: str = "auto",
        batch: BatchTuning | None = None,
        gpu: Provider = "cuda",
        profile_dir: str | None = None,
        **tuning: Any,
    ) -> None:
        super().__init__(threads, device=device, **tuning)
        self.tuning = dataclasses.replace(RapidTuning(), **tuning)
        if gpu == "cpu":
            raise ConfigurationError(detail="a GPU provider is cuda or tensorrt, not cpu")
        # The provider follows the device chosen (rapid._device); streams 0: 4 on a GPU
        # (one batch's CPU work overlaps another's GPU work), else 1.
        provider: Provider = gpu if self.device == "cuda" else "cpu"
        wanted = batch or BatchTuning()
        streams = wanted.streams or (4 if self.device == "cuda" else 1)
        self.batch = dataclasses.replace(wanted, provider=provider, streams=streams)
        self._profile_dir = profile_dir
        self._batcher: Batcher | None = None
        self._helpers: list[BatchHelper] = []
        self._start = threading.Lock()

    def warm_up(self) -> None:
        """Check the model files and start every helper now (on CUDA, buckets planned)."""
        self.model_hashes()
        self._running()
        wanted = _PROVIDER_NAMES[self.batch.provider]
        if any(wanted not in runtime.get("providers", []) for runtime in self.runtimes()):
            raise ConfigurationError(
                detail=f"{wanted} was chosen but onnxruntime fell back to another provider"
            )

    def params(self) -> dict[str, ParamValue]:
        settings = super().params()
        settings.update(self.batch.recorded())
        if self.device == "cuda":
            settings["cuda_tf32"] = False
        return settings

    def runtimes(self) -> list[dict[str, Any]]:
        """What each helper reported at its start: providers, versions, planning seconds."""
        return [helper.runtime for helper in self._helpers]

    def take_stats(self) -> dict[str, Any]:
        """The batches read since the last call: sizes and seconds per stage."""
        return self._running().take_stats()

    def profiles(self) -> list[dict[str, Any]]:
        """onnxruntime's profile of each helper's models (with ``profile_dir``); ends it."""
        self._running()
        return [helper.profile() for helper in self._helpers]

    def pin(self, cpus: tuple[int, ...]) -> None:
        """Helper i on ``cpus[i % len]`` (a CPU batched engine; a GPU's helpers float)."""
        with self._lock:
            self._cpus = cpus
            for n, helper in enumerate(self._helpers if self._batcher else []):
                helper.pin(self._cpu(n))

    def close(self) -> None:
        with self._start:
            batcher, self._batcher = self._batcher, None
        if batcher is not None:
            batcher.close()

    def _read(self, gray: GrayPage, side: int, limit: int) -> tuple[list[Line], bool]:
        return self._running().read((gray, side, limit))

    def _running(self) -> Batcher:
        """The batcher, its helpers started together on first use."""
        with self._start:
            if self._batcher is None:
                config, options = self._config(), self._options()
                helpers = [BatchHelper(config, options) for _ in range(self.batch.streams)]
                for n, helper in enumerate(helpers):
                    helper.pin(self._cpu(n))
                with ThreadPoolExecutor(len(helpers)) as pool:
                    list(pool.map(BatchHelper.start, helpers))
                self._helpers = helpers
                wait_s = self.batch.wait_ms / 1000
                self._batcher = Batcher(helpers, self.batch.pages, wait_s, self._deadline)
            return self._batcher

    def _deadline(self) -> float:
        """A batch's deadline: one page's, since its pages are read together."""
        return self.tuning.timeout_s

    def _options(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self.batch),
            "threads": self.threads,
            "orientation": self.tuning.orientation,
            "det_max_side": self.tuning.det_max_side,
            "profile_dir": self._profile_dir,
        }
