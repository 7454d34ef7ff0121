"""The workers' Prometheus endpoint: pipeline metrics and the SDK's own, without PHI."""

from __future__ import annotations

import asyncio
import hashlib
import socket
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from activities.engines.base import OcrEngine
from starter.client.submit import submit, wait
from tests.helpers import make_settings, running_pipeline
from workers.common import connect


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def _total(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    want = set(labels.items())
    return sum(v for (n, lab), v in samples.items() if n == name and want <= lab)


async def test_worker_metrics_endpoint_reports_pipeline_and_sdk(
    tmp_path: Path,
    temporal_address: str,
    corpus: Path,
    ocr_engine: OcrEngine,
    tenant: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One published, one rejected and one retried-then-quarantined document show up by code."""
    port = _free_port()
    settings = make_settings(tmp_path, temporal_address)
    good = corpus / "ocr_gt" / "funsd_86263525.png"
    corrupt = corpus / "bad_inputs" / "ocrmypdf_invalid_header_only.pdf"
    poison = tmp_path / "poison.png"
    poison.write_bytes(good.read_bytes() + b"\0")  # another SHA-256, same image
    client = await connect(settings, port)
    async with running_pipeline(client, settings, ocr_engine) as custody:
        subs = [await submit(custody, p, tenant=tenant) for p in (good, corrupt)]
        # Fault injection: OCR fails on every attempt for the poison document only.
        poison_sha = hashlib.sha256(poison.read_bytes()).hexdigest()
        monkeypatch.setenv("CUSTODY_FAULTS", f"ocr.start=raise@{poison_sha[:16]}")
        poisoned = await submit(custody, poison, tenant=tenant)
        results = [
            await asyncio.wait_for(wait(custody, s.sha256, tenant=tenant), 600)
            for s in (*subs, poisoned)
        ]
        async with httpx.AsyncClient() as http:
            text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    states = [(r.state.value, r.code) for r in results]
    samples = _samples(text)
    assert states[0] == ("published", None) and states[1][0] == "rejected"
    assert states[2][0] == "quarantined"
    assert _total(samples, "custody_documents_terminal_total", state="published") == 1
    assert (
        _total(samples, "custody_documents_terminal_total", state="rejected", code=states[1][1])
        == 1
    )
    assert (
        _total(samples, "custody_documents_terminal_total", state="quarantined", code=states[2][1])
        == 1
    )
    # OCR_RETRY allows three attempts: two failed attempts were retried.
    assert _total(samples, "custody_activity_retries_total", activity="custody.ocr") == 2
    assert _total(samples, "custody_ocr_seconds_per_page_count") == 1
    assert _total(samples, "custody_ocr_seconds_per_page_sum") > 0
    assert _total(samples, "custody_validated_to_published_seconds_count") == 1
    assert _total(samples, "custody_accepted_to_published_seconds_count") == 1
    assert _total(samples, "custody_admission_to_start_seconds_count") == 2  # good + poison
    assert any(n.startswith("temporal_") for n, _ in samples)  # the SDK's own metrics
    for secret in (tenant, good.name, corrupt.name, subs[0].sha256):
        assert secret not in text
