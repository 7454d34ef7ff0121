"""The chaos harness on a real stack: a short form in every run, the rest under ``-m chaos``.

One stack (dev server on SQLite, both workers as processes) per report; each
test below reads one. The short form, which ``make test`` runs, is one trial
of each fault family that recovers in seconds: the dev server killed, hostile
input, an engine failing one document, S3 down, staging full (about 30-60 s
on two cores, most of it the stack). The scenarios that must wait a timeout
out run under ``-m chaos`` (``make test-long``, a CI step of its own): a hung
page must outlast the 45 s OCR heartbeat timeout, an activity option the pinned
workflow writes into its history, so no harness setting can shorten it, and a
worker killed mid-OCR waits for the same timeout (``tests/workers/
test_worker_kill.py`` covers that kill in every run); a burst through an S3
outage is the store outage again at a larger scale. The long form is ``custody
chaos all --trials N`` (see docs/reliability.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from starter.chaos.runner import run
from starter.chaos.scenarios import SCENARIOS

#: One trial per fault family, each recovered in seconds: the default run's short form.
SHORT = ["server-restart", "poison", "poison-engine", "store-outage", "staging-full"]
#: What waits out a heartbeat timeout, or repeats a family at scale: ``-m chaos`` only.
LONG = [name for name in SCENARIOS if name not in SHORT]

# Each report is built once, in its first test's setup: its scenarios in turn.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
async def report(corpus: Path) -> dict[str, Any]:
    """The short form's report: one trial of each scenario in ``SHORT``."""
    return await run(SHORT, trials=1, seed=4, corpus=corpus)


@pytest.fixture(scope="module")
async def long_report(corpus: Path) -> dict[str, Any]:
    """The rest, on a stack of its own: one trial of each scenario in ``LONG``."""
    return await run(LONG, trials=1, seed=4, corpus=corpus)


def _trial(report: dict[str, Any], scenario: str) -> dict[str, Any]:
    return next(t for t in report["trials"] if t["scenario"] == scenario)


def _clean(report: dict[str, Any], names: list[str]) -> None:
    """Every named scenario ran, injected its faults, and broke no invariant."""
    assert report["violations"] == 0, report
    assert report["scanned"]["metrics_bytes"] > 0  # the dev server's /metrics was read
    assert sorted(report["scenarios"]) == sorted(names)
    for name, counts in report["scenarios"].items():
        assert counts["trials"] == 1 and counts["faults"] >= 1, name


def test_every_scenario_is_in_one_form() -> None:
    """Between them the two forms run every scenario the harness has."""
    assert sorted(SHORT + LONG) == sorted(SCENARIOS) and len(LONG) >= 1


def test_chaos_short_form_finds_no_violations(report: dict[str, Any]) -> None:
    """Every short-form scenario ran, injected its faults, and broke no invariant."""
    _clean(report, SHORT)


@pytest.mark.chaos
def test_chaos_long_scenarios_find_no_violations(long_report: dict[str, Any]) -> None:
    """Every scenario left out of the short form ran, injected its faults, broke nothing."""
    _clean(long_report, LONG)


@pytest.mark.chaos
def test_chaos_worker_kill_kills_with_sigkill(long_report: dict[str, Any]) -> None:
    """The OCR worker died of SIGKILL (-9) and the document still published once."""
    trial = _trial(long_report, "worker-kill")
    assert any(f.endswith("rc=-9") for f in trial["faults"]), trial["faults"]
    assert trial["states"] == {"tess_phototest.tif": "published"}


def test_chaos_server_restart_changes_server_pid(report: dict[str, Any]) -> None:
    """The dev server was killed (-9) and a new process served the same SQLite file."""
    trial = _trial(report, "server-restart")
    assert trial["detail"]["server_pid_before"] != trial["detail"]["server_pid_after"]
    assert re.search(r"rc=-9", trial["faults"][0])
    assert set(trial["states"].values()) == {"published"}


@pytest.mark.chaos
def test_chaos_hung_page_retries_once(long_report: dict[str, Any]) -> None:
    """A hung page cost one abandoned OCR attempt: six activity attempts, one record."""
    trial = _trial(long_report, "hung-page")
    assert trial["detail"]["hung_pages"] >= 1
    assert trial["attempts"] >= 6  # stage, validate, ocr x2, check, publish
    assert trial["states"] == {"tess_phototest.tif": "published"}


def test_chaos_poison_gets_verdicts(report: dict[str, Any]) -> None:
    """Each poison file is rejected and the good document in the batch publishes."""
    trial = _trial(report, "poison")
    assert trial["states"].pop("tess_phototest.tif") == "published"
    assert list(trial["states"].values()) == ["rejected"] * 3


@pytest.mark.chaos
def test_chaos_burst_reports_queue_age_without_amplification(long_report: dict[str, Any]) -> None:
    """A burst on S3 through an outage: queue age reported, attempts held to the backoff bound."""
    trial = _trial(long_report, "burst")
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
