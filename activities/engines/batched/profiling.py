"""onnxruntime's own profile of a session, summed up: where its run time goes, by kind.

With ``Runtime.profile_dir`` set, every session writes onnxruntime's profiler
trace (Chrome trace JSON, one event per node run). ``summary`` reads one back
as the few figures the benchmark reports: how many runs, their total
milliseconds, the operator kinds that took the most, and the copies between
host and device (``MemcpyToHost`` / ``MemcpyFromHost`` nodes, on CUDA only),
so a profile taken on a GPU says what crossing the bus costs.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

_COPIES = ("MemcpyToHost", "MemcpyFromHost")
_TOP = 8


def summary(trace: str | Path) -> dict[str, Any]:
    """Runs, run milliseconds, the top operator kinds and host-device copies of one trace."""
    events = json.loads(Path(trace).read_text())
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    by_op: dict[str, float] = defaultdict(float)
    by_provider: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("cat") != "Node" or not str(event.get("name", "")).endswith("_kernel_time"):
            continue
        args = event.get("args", {})
        by_op[str(args.get("op_name", "?"))] += event.get("dur", 0) / 1000
        by_provider[str(args.get("provider", "?"))] += event.get("dur", 0) / 1000
    top = sorted(by_op.items(), key=lambda kv: -kv[1])[:_TOP]
    return {
        "runs": len(runs),
        "run_ms": round(sum(e.get("dur", 0) for e in runs) / 1000, 2),
        "node_ms_by_op": {op: round(ms, 2) for op, ms in top},
        "node_ms_by_provider": {p: round(ms, 2) for p, ms in by_provider.items()},
        "copy_ms": round(sum(by_op.get(op, 0.0) for op in _COPIES), 2),
    }


def end(sessions: dict[str, Any]) -> dict[str, Any]:
    """Stop each profiling session and summarise its trace, by model name."""
    return {name: summary(session.end_profiling()) for name, session in sessions.items()}
