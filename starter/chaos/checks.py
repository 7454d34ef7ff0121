"""The invariants every chaos trial must keep, checked after the fact.

Each check returns violations as short strings (hashes, codes and file names,
never document text): an empty list is a pass.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import subprocess
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from activities.scratch import StagingArea
from custody import ids
from custody.models import DocState, DocumentResult
from custody.settings import Settings
from custody.stores import ObjectStore
from starter.local.stack import temporal_binary

TERMINAL = {DocState.PUBLISHED, DocState.REJECTED, DocState.QUARANTINED}
MIN_LINE = 12  # shorter lines ("Date:") are too common to mean a leak


def terminal(sha256: str, result: DocumentResult | None, expected: DocState) -> list[str]:
    """Exactly one terminal state, the one this document should reach."""
    if result is None:
        return [f"{sha256[:12]} lost: no terminal state before the deadline"]
    if result.state not in TERMINAL:
        return [f"{sha256[:12]} ended {result.state.value}, not terminal"]
    if result.state is not expected:
        return [f"{sha256[:12]} {result.state.value} ({result.code}), expected {expected.value}"]
    return []


def records(store: ObjectStore, sha256: str, tenant: str, state: DocState) -> list[str]:
    """One record or one outcome, never both; one published text per document."""
    has_record = store.exists(ids.record_key(sha256, tenant))
    outcomes = list(store.list(ids.outcome_prefix(sha256, tenant)))
    has_outcome = len(outcomes) > 0
    out: list[str] = []
    if has_record == has_outcome or len(outcomes) > 1:
        out.append(f"{sha256[:12]} record={has_record} outcomes={len(outcomes)}")
    if state is DocState.PUBLISHED:
        prefix = ids.text_key(sha256, tenant, "")[: -len("text-.txt")]
        texts = [k for k in store.list(prefix) if "/text-" in k]
        if len(texts) != 1:
            out.append(f"{sha256[:12]} {len(texts)} published texts")
    return out


def text_sha(store: ObjectStore, sha256: str, tenant: str) -> str | None:
    key = ids.record_key(sha256, tenant)
    if not store.exists(key):
        return None
    data = json.loads(store.get(key))
    # A signed record wraps the record; read the one field, whatever the envelope.
    record = data.get("record", data)
    return str(record["text_sha256"])


def staging_empty(root: Path, grace_s: float) -> list[str]:
    """No staged copy left under ``root``; an abandoned attempt still running gets ``grace_s``."""
    area = StagingArea(root)
    deadline = time.monotonic() + grace_s
    while (left := area.files()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return [f"staging file left: {p.parent.name}/{p.name[:12]}" for p in left]


def outcome_text(store: ObjectStore, sha256: str, tenant: str) -> str:
    """The stored outcome records (rejection or quarantine, with their messages)."""
    return "\n".join(
        store.get(k).decode("utf-8", errors="replace")
        for k in store.list(ids.outcome_prefix(sha256, tenant))
    )


def ground_truth(paths: Iterable[Path]) -> set[str]:
    """Lines of the documents' ground truth long enough to be evidence of a leak."""
    lines: set[str] = set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if len(line.strip()) >= MIN_LINE:
                lines.add(line.strip())
    return lines


def leaks(where: str, text: str, truth: set[str]) -> list[str]:
    return [
        f"document text in {where}: line of {len(line)} chars" for line in truth if line in text
    ]


def log_leaks(logs_dir: Path, truth: set[str]) -> list[str]:
    out: list[str] = []
    for log in sorted(logs_dir.glob("*.log")):
        out += leaks(log.name, log.read_text(encoding="utf-8", errors="replace"), truth)
    return out


def history(settings: Settings, workflow_id: str) -> dict[str, Any]:
    """A workflow's history as the ``temporal`` CLI exports it."""
    out = subprocess.run(
        [str(temporal_binary()), "workflow", "show", "--workflow-id", workflow_id]
        + ["--address", settings.temporal_address, "--output", "json"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def history_text(data: Any) -> str:
    """Every string in a history, payloads (base64 JSON) decoded, as one text."""
    return "\n".join(_strings(data))


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "data" and isinstance(value, str):
                yield _decoded(value)
            else:
                yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def _decoded(value: str) -> str:
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return value


def retry_codes(data: dict[str, Any]) -> list[str]:
    """Per retried activity, the code of the last failure it got past.

    The server writes an activity's started event once, for its final attempt,
    with the failure before it as ``lastFailure``: one code per retried step.
    """
    out: list[str] = []
    for event in data.get("events", []):
        failure = (event.get("activityTaskStartedEventAttributes") or {}).get("lastFailure")
        while failure:
            info = failure.get("applicationFailureInfo")
            if info and info.get("type"):
                out.append(str(info["type"]))
                break
            failure = failure.get("cause")
    return out


def retries_total(metrics: str) -> float:
    """Sum of ``custody_activity_retries_total`` in a worker's Prometheus text."""
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("custody_activity_retries_total"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def ocr_wait_s(data: dict[str, Any]) -> float | None:
    """Seconds from the workflow's start to its OCR attempt that counted: time spent waiting.

    None when the document never reached OCR (rejected at intake).
    """
    events = data.get("events", [])
    ocr = {
        e.get("eventId")
        for e in events
        if (e.get("activityTaskScheduledEventAttributes") or {}).get("activityType", {}).get("name")
        == "custody.ocr"
    }
    for event in events:
        started = event.get("activityTaskStartedEventAttributes")
        if started is not None and started.get("scheduledEventId") in ocr:
            return round(_when(event) - _when(events[0]), 1)
    return None


def _when(event: dict[str, Any]) -> float:
    # "2026-11-29T12:00:00.123456789Z": datetime takes six fractional digits at most.
    stamp = re.sub(r"(\.\d{6})\d*", r"\1", str(event["eventTime"])).replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


def activity_attempts(data: dict[str, Any]) -> int:
    """Activity attempts a history shows; a started event carries its final attempt number."""
    started = (e.get("activityTaskStartedEventAttributes") for e in data.get("events", []))
    return sum(int(s.get("attempt", 1)) for s in started if s is not None)
