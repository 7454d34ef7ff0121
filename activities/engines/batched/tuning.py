"""What shapes the batched engine's calls, recorded with every result it reads.

Light on purpose (no numpy, no onnxruntime): the engine, its helper and the
benchmark all read it, and its fields go into the engine's ``params()``.
The defaults keep the lane engine's text exactly (docs/ocr-benchmark.md,
"Batched OCR"); coarser buckets buy bigger calls at the price of readings that
differ from a page read alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

Provider = Literal["cpu", "cuda", "tensorrt"]


@dataclass(frozen=True)
class BatchTuning:
    """Batch sizes, bucket steps and the runtime path; ``params()`` records each."""

    pages: int = 8  # pages per detector call, at most
    streams: int = 1  # helper processes: batches in flight at once (0: the engine decides)
    lines: int = 64  # lines per recogniser call, at most
    line_px: int = 1  # recogniser calls group lines this many px wide; 1: equal widths only
    det_px: int = 32  # detector buckets: sides rounded up to this; 32: each page's own shape
    wait_ms: float = 0.0  # how long a batch waits for more pages than are already queued
    provider: Provider = "cpu"
    iobinding: bool = True  # CUDA: the recogniser's scores stay on the GPU
    cuda_graphs: bool = False  # CUDA: the detector replayed as captured graphs

    def __post_init__(self) -> None:
        for name in ("pages", "lines", "line_px", "det_px"):
            if getattr(self, name) < 1:
                raise ValueError(f"batch {name} must be >= 1")
        if self.streams < 0:
            raise ValueError("batch streams must be >= 0")
        if self.det_px % 32:
            raise ValueError("batch det_px must be a multiple of 32 (the detector's stride)")

    @property
    def device(self) -> str:
        return "cpu" if self.provider == "cpu" else "cuda"

    def recorded(self) -> dict[str, str | int | float | bool]:
        """The fields as the engine's params record them: ``provider``, and ``batch_`` before
        each other name."""
        fields = dataclasses.asdict(self)
        return {"provider": fields.pop("provider")} | {f"batch_{k}": v for k, v in fields.items()}
