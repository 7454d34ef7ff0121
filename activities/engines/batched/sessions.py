"""onnxruntime sessions for the batched reader: CPU, CUDA or TensorRT, and how calls cross.

One ``Runtime`` says where the models run; ``Model`` wraps one session. On a
CPU a call is a plain ``run``. On CUDA:

- **cuDNN heuristics, no TF32.** cuDNN picks convolution algorithms by
  heuristic rather than timing each new shape (RapidOCR's default timed them,
  12.7 s a page on an H200), and TF32 stays off so the GPU's sums keep
  float32's precision: the text must be the CPU path's.
- **IOBinding** (``Model.run_bound``): the recogniser's scores, 18,710 floats per
  column, stay on the device; the CTC head (``ctc_head``) takes each column's
  best character there, and only that crosses to the host.
- **CUDA graphs** (``cuda_graphs``, detector only): one captured graph per
  bucket shape and batch size, replayed into fixed device buffers. Off by
  default; it pays only when kernel launches, not kernels, are the cost.
- **TensorRT** (``provider="tensorrt"``): onnxruntime's TensorRT provider, float32
  only (no FP16: it changes readings), engines cached on disk, CUDA beside it
  for whatever TensorRT does not take. Needs TensorRT's own libraries.

Each path is chosen only where onnxruntime offers it; asking for one it does
not offer is a ``ConfigurationError`` at start, never a silent CPU fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from activities.engines.batched.tuning import Provider
from custody.errors import ConfigurationError

_ORT_NAMES = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
}


@dataclass(frozen=True)
class Runtime:
    """Where and how the models run; recorded in the engine's params."""

    provider: Provider = "cpu"
    threads: int = 1  # onnxruntime intra-op threads (CPU work)
    iobinding: bool = True  # CUDA: the recogniser's scores stay on the device
    cuda_graphs: bool = False  # CUDA: replay the detector as captured graphs
    profile_dir: str | None = None  # onnxruntime's profiler writes here when set
    trt_cache_dir: str | None = None  # TensorRT's engine cache

    @property
    def device(self) -> str:
        return "cpu" if self.provider == "cpu" else "cuda"


def check(runtime: Runtime) -> None:
    """Refuse a provider this onnxruntime does not offer, before any model loads."""
    import onnxruntime

    wanted = _ORT_NAMES[runtime.provider]
    if wanted not in onnxruntime.get_available_providers():
        raise ConfigurationError(detail=f"onnxruntime here has no {wanted} (onnxruntime-gpu?)")


def open_session(model: str | bytes, name: str, runtime: Runtime, *, graphs: bool = False) -> Any:
    """An ``InferenceSession`` for ``model`` (a path or bytes) on the runtime's provider;
    ``graphs``: CUDA graph capture on (``Model(graphs=True)`` replays them)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = runtime.threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # flat memory over pages of every shape (rapid.py)
    if runtime.profile_dir:
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(runtime.profile_dir) / name)
    providers = _providers(runtime, graphs=graphs)
    return onnxruntime.InferenceSession(model, sess_options=options, providers=providers)


def _providers(runtime: Runtime, *, graphs: bool) -> list[Any]:
    cuda: dict[str, str] = {
        "device_id": "0",
        "cudnn_conv_algo_search": "HEURISTIC",
        "use_tf32": "0",
        "do_copy_in_default_stream": "1",
    }
    if graphs:
        cuda["enable_cuda_graph"] = "1"
    if runtime.provider == "cpu":
        return ["CPUExecutionProvider"]
    if runtime.provider == "cuda":
        return [("CUDAExecutionProvider", cuda), "CPUExecutionProvider"]
    cache = runtime.trt_cache_dir or "/tmp/custody-trt"
    trt = {
        "trt_fp16_enable": "False",
        "trt_engine_cache_enable": "True",
        "trt_engine_cache_path": cache,
        "trt_max_workspace_size": str(4 << 30),
    }
    return [
        ("TensorrtExecutionProvider", trt),
        ("CUDAExecutionProvider", cuda),
        "CPUExecutionProvider",
    ]


class Model:
    """One model's session: host arrays in, host arrays (or device values) out."""

    def __init__(self, session: Any, runtime: Runtime, *, graphs: bool = False) -> None:
        self.session = session
        self._runtime = runtime
        self._replay = graphs and runtime.device == "cuda"  # opened with open_session(graphs)
        self._input = session.get_inputs()[0].name
        self._outputs = [o.name for o in session.get_outputs()]
        self._graphs: dict[tuple[int, ...], tuple[Any, Any, Any, Any]] = {}

    def providers(self) -> list[str]:
        return list(self.session.get_providers())

    def run(self, batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The first output for ``batch``, on the host."""
        if self._replay:
            return self._replayed(batch)
        out: npt.NDArray[np.float32] = self.session.run(self._outputs[:1], {self._input: batch})[0]
        return out

    def run_bound(self, batch: npt.NDArray[np.float32]) -> Any:
        """The first output as an ``OrtValue`` left where it was made (the GPU on CUDA)."""
        binding = self.session.io_binding()
        binding.bind_cpu_input(self._input, batch)
        binding.bind_output(self._outputs[0], self._runtime.device)
        self.session.run_with_iobinding(binding)
        return binding.get_outputs()[0]

    def run_value(self, value: Any) -> list[npt.NDArray[Any]]:
        """Every output, on the host, for an input already an ``OrtValue`` (``run_bound``'s)."""
        binding = self.session.io_binding()
        binding.bind_ortvalue_input(self._input, value)
        for name in self._outputs:
            binding.bind_output(name, "cpu")
        self.session.run_with_iobinding(binding)
        return [v.numpy() for v in binding.get_outputs()]

    def _replayed(self, batch: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """A captured CUDA graph per input shape: copy in, replay, copy the map out."""
        import onnxruntime

        slot = self._graphs.get(batch.shape)
        if slot is None:
            n, _, height, width = batch.shape
            value = onnxruntime.OrtValue.ortvalue_from_shape_and_type
            inp = value(batch.shape, np.float32, "cuda", 0)
            out = value((n, 1, height, width), np.float32, "cuda", 0)
            binding = self.session.io_binding()
            binding.bind_ortvalue_input(self._input, inp)
            binding.bind_ortvalue_output(self._outputs[0], out)
            options = onnxruntime.RunOptions()
            options.add_run_config_entry("gpu_graph_id", str(len(self._graphs) + 1))
            slot = self._graphs[batch.shape] = (inp, out, binding, options)
        inp, out, binding, options = slot
        inp.update_inplace(batch)
        self.session.run_with_iobinding(binding, options)
        host: npt.NDArray[np.float32] = out.numpy()
        return host
