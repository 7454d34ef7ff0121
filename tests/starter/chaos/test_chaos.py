"""The chaos harness in its short form: every scenario once, on a real stack.

One stack (dev server on SQLite, both workers as processes) serves all the
scenarios; each test below reads the one report. It takes minutes, most of
them waiting the faults out (a hung page must outlast the 45 s OCR heartbeat
timeout, an activity option the pinned workflow writes into its history, so no
harness setting can shorten it), so ``make test`` leaves it out and CI runs it
as a step of its own (``make test-long``, which selects ``-m "slow or chaos"``).
The long form is ``custody chaos all --trials N`` (see docs/reliability.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from starter.chaos.runner import run
from starter.chaos.scenarios import SCENARIOS

# The report is built once, in the first test's setup: every scenario in turn.
pytestmark = [pytest.mark.chaos, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
async def report(corpus: Path) -> dict[str, Any]:
    return await run(list(SCENARIOS), trials=1, seed=4, corpus=corpus)


def _trial(report: dict[str, Any], scenario: str) -> dict[str, Any]:
    return next(t for t in report["trials"] if t["scenario"] == scenario)


def test_chaos_short_form_finds_no_violations(report: dict[str, Any]) -> None:
    """Every scenario ran, injected its faults, and broke no invariant."""
    assert report["violations"] == 0, report
    assert report["scanned"]["metrics_bytes"] > 0  # the dev server's /metrics was read
    for name, counts in report["scenarios"].items():
        assert counts["trials"] == 1 and counts["faults"] >= 1, name


def test_chaos_worker_kill_kills_with_sigkill(report: dict[str, Any]) -> None:
    """The OCR worker died of SIGKILL (-9) and the document still published once."""
    trial = _trial(report, "worker-kill")
    assert any(f.endswith("rc=-9") for f in trial["faults"]), trial["faults"]
    assert trial["states"] == {"tess_phototest.tif": "published"}


def test_chaos_server_restart_changes_server_pid(report: dict[str, Any]) -> None:
    """The dev server was killed (-9) and a new process served the same SQLite file."""
    trial = _trial(report, "server-restart")
    assert trial["detail"]["server_pid_before"] != trial["detail"]["server_pid_after"]
    assert re.search(r"rc=-9", trial["faults"][0])
    assert set(trial["states"].values()) == {"published"}


def test_chaos_hung_page_retries_once(report: dict[str, Any]) -> None:
    """A hung page cost one abandoned OCR attempt: six activity attempts, one record."""
    trial = _trial(report, "hung-page")
    assert trial["detail"]["hung_pages"] >= 1
    assert trial["attempts"] >= 6  # stage, validate, ocr x2, check, publish
    assert trial["states"] == {"tess_phototest.tif": "published"}


def test_chaos_poison_gets_verdicts(report: dict[str, Any]) -> None:
    """Each poison file is rejected and the good document in the batch publishes."""
    trial = _trial(report, "poison")
    assert trial["states"].pop("tess_phototest.tif") == "published"
    assert list(trial["states"].values()) == ["rejected"] * 3


def test_chaos_burst_reports_queue_age_without_amplification(report: dict[str, Any]) -> None:
    """A burst on S3 through an outage: queue age reported, attempts held to the backoff bound."""
    trial = _trial(report, "burst")
    docs = len(trial["states"])
    assert trial["detail"]["queue_age_max_s"] > 0  # the last of the burst waited for OCR
    assert any(f.startswith("S3 endpoint down at +0.") for f in trial["faults"]), trial["faults"]
    assert trial["detail"]["store_failures_seen"] >= 1
    assert 5 * docs < trial["attempts"] <= trial["detail"]["attempt_bound"]
    assert set(trial["states"].values()) == {"published"}


def test_chaos_store_outage_recovers_on_the_same_s3(report: dict[str, Any]) -> None:
    """S3 stopped while staging: steps failed STORE_UNAVAILABLE, retried, each published once."""
    trial = _trial(report, "store-outage")
    assert trial["detail"]["store_failures_seen"] >= 1
    assert trial["attempts"] > 5 * len(trial["states"])
    assert set(trial["states"].values()) == {"published"}


def test_chaos_staging_full_retries_until_space_is_freed(report: dict[str, Any]) -> None:
    """A full staging tmpfs: staging failed STAGING_FULL, then published; nothing left staged."""
    trial = _trial(report, "staging-full")
    assert "skipped" not in trial["detail"], trial["detail"].get("skipped")
    assert trial["detail"]["filler_bytes"] > 0
    assert trial["detail"]["staging_full_retries"] >= 1
    assert all(a["stage"] >= 2 for a in trial["detail"]["step_attempts"].values())
    assert set(trial["states"].values()) == {"published"}


def test_chaos_poison_engine_is_capped_and_quarantined(report: dict[str, Any]) -> None:
    """OCR failing for one document: three OCR attempts, quarantined OCR_ERROR; others publish."""
    trial = _trial(report, "poison-engine")
    poison = "variant-engine-poison-0.tif"
    assert trial["states"].pop(poison) == "quarantined"
    assert trial["detail"]["step_attempts"][poison]["ocr"] == 3
    assert set(trial["states"].values()) == {"published"}
    assert trial["detail"]["poisoned_batch_good_latency_max_s"] > 0
    assert trial["detail"]["clean_batch_latency_max_s"] > 0
