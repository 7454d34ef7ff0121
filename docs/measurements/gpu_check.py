"""Device check for Custody's OCR GPU paths (#14): run on the lent H200, results to $OUT.

Run from the repository root with the engines' packages (and onnxruntime-gpu)
on PYTHONPATH and CUSTODY_CORPUS set; STAGE_S caps each stage's seconds.
Results: docs/ocr-benchmark.md, "Measured on a GPU".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OUT = Path(os.environ.get("OUT", "/tmp/out"))
CORPUS = Path(os.environ["CUSTODY_CORPUS"]) / "ocr_gt"
TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".tif": "image/tiff", ".pdf": "application/pdf"}
report: dict = {}


def save() -> None:
    (OUT / "gpu_check.json").write_text(json.dumps(report, indent=1, default=str))


def pages():
    from activities.pages.raster import iter_pages

    for path in sorted(CORPUS.iterdir()):
        if path.suffix in TYPES:
            truth = path.with_suffix(".txt").read_text(encoding="utf-8")
            images = [img for _, img in iter_pages(path, TYPES[path.suffix], dpi=200)]
            yield path.stem, images, truth


def run_engine(engine, docs, workers: int) -> dict:
    from starter.bench.textmetrics import word_f1

    jobs = [(stem, n, img) for stem, imgs, _ in docs for n, img in enumerate(imgs)]
    texts: dict[str, list[str]] = {}
    started = time.perf_counter()
    deadline = started + float(os.environ.get("STAGE_S", "60"))

    def one(j):
        if time.perf_counter() > deadline:
            return None
        return (j[0], j[1], engine.recognise(j[2], j[1]))

    with ThreadPoolExecutor(workers) as pool:
        results = [r for r in pool.map(one, jobs) if r is not None]
    elapsed = time.perf_counter() - started
    done = {(r[0], r[1]) for r in results}
    docs = [d for d in docs if all((d[0], n) in done for n in range(len(d[1])))]
    results = [r for r in results if any(r[0] == d[0] for d in docs)]
    jobs = results
    for stem, _, page in sorted(results, key=lambda r: (r[0], r[1])):
        texts.setdefault(stem, []).append(page.text)
    truth = {stem: t for stem, _, t in docs}
    f1 = {stem: round(word_f1("\n".join(t), truth[stem]), 4) for stem, t in texts.items()}
    return {
        "pages": len(jobs),
        "seconds": round(elapsed, 2),
        "pages_per_min": round(60 * len(jobs) / elapsed, 1),
        "f1_mean": round(sum(f1.values()) / len(f1), 4),
        "f1": f1,
        "params_device": engine.params().get("device"),
    }


def stage(name, fn):
    started = time.perf_counter()
    try:
        report[name] = fn()
    except Exception:
        report[name] = {"error": traceback.format_exc()[-3000:]}
    report.setdefault("stage_seconds", {})[name] = round(time.perf_counter() - started, 1)
    print(name, json.dumps(report[name], default=str)[:600], flush=True)
    save()


def env() -> dict:
    import onnxruntime
    import torch

    smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return {
        "python": sys.version,
        "nvidia_smi": smi.strip(),
        "onnxruntime": onnxruntime.__version__,
        "providers": onnxruntime.get_available_providers(),
        "torch": torch.__version__,
        "torch_cuda": torch.cuda.is_available(),
    }


def rapid(device: str, lanes: int, docs) -> dict:
    from activities.engines.rapid import RapidOcrEngine

    engine = RapidOcrEngine(1, device=device)
    try:
        t0 = time.perf_counter()
        engine.warm_up()
        warm = time.perf_counter() - t0
        if lanes > 1:  # start the other helpers before timing
            with ThreadPoolExecutor(lanes) as pool:
                list(pool.map(lambda _: engine.recognise(docs[0][1][0], 0), range(lanes)))
        result = run_engine(engine, docs, lanes)
        result["warm_up_s"] = round(warm, 2)
        result["providers"] = engine._made[0].runtime.get("providers") if engine._made else None
        return result
    finally:
        engine.close()


def easy(device: str, docs, threads: int) -> dict:
    from activities.engines.base import EasyOcrEngine

    engine = EasyOcrEngine(threads, model_dir="/tmp/easymodels", device=device)
    t0 = time.perf_counter()
    engine.warm_up()
    warm = time.perf_counter() - t0
    result = run_engine(engine, docs, 1)
    result["warm_up_s"] = round(warm, 2)
    result["reader_device"] = str(engine.reader().device)
    return result


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    stage("env", env)
    docs = list(pages())
    report["corpus_docs"] = len(docs)
    stage("rapid_cuda_1lane", lambda: rapid("cuda", 1, docs))
    stage("easy_cuda", lambda: easy("cuda", docs, 4))
    stage("rapid_cuda_4lanes", lambda: rapid("cuda", 4, docs))
    stage("rapid_cpu_8lanes", lambda: rapid("cpu", 8, docs))


if __name__ == "__main__":
    main()
