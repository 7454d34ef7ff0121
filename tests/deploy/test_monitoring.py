"""Every metric the alert rules and the dashboard name is one the code exports.

The exported names are read from the code itself: each instrument created in
workers/ (the Temporal runtime's meter: counters get ``_total``), in
starter/edge/ and in starter/client/ (admission, on the registry the edge
serves; prometheus_client: counters get ``_total``), histograms
exported as ``_bucket``, ``_sum`` and ``_count``.
"""

from __future__ import annotations

import ast
import json
import re

import yaml

from tests.deploy.conftest import DEPLOY

REPO = DEPLOY.parent
_KINDS = {
    "create_counter": "counter",
    "create_histogram": "histogram",
    "create_histogram_float": "histogram",
    "create_histogram_timedelta": "histogram",
    "create_gauge": "gauge",
    "create_gauge_float": "gauge",
    "Counter": "counter",
    "Histogram": "histogram",
    "Gauge": "gauge",
}
_SERIES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
_NAME = re.compile(r"\bcustody_[a-z0-9_]+\b")


def _histogram_table(tree: ast.Module) -> set[str]:
    """Keys of a ``HISTOGRAMS = {name: buckets}`` table: names passed on as variables."""
    names: set[str] = set()
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "HISTOGRAMS":
            assert isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict)
            names |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return {n + s for n in names for s in _SERIES["histogram"]}


def exported() -> set[str]:
    found: set[str] = set()
    for path in [
        *REPO.glob("workers/*.py"),
        *REPO.glob("starter/edge/*.py"),
        *REPO.glob("starter/client/*.py"),
    ]:
        tree = ast.parse(path.read_text())
        found |= _histogram_table(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                called in _KINDS
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                found |= {first.value + s for s in _SERIES[_KINDS[called]]}
    return found


def _named(text: str) -> set[str]:
    return set(_NAME.findall(text))


def test_monitoring_alerts_name_only_exported_metrics() -> None:
    """Each rule's expression names metrics the code exports, and the four asked for are there."""
    rules = [
        r
        for g in yaml.safe_load((DEPLOY / "monitoring/alerts.yaml").read_text())["groups"]
        for r in g["rules"]
    ]
    named = set().union(*(_named(r["expr"]) for r in rules))
    assert named and named <= exported(), sorted(named - exported())
    for needed in (
        "custody_queue_age_seconds",
        "custody_validated_to_published_seconds_bucket",
        "custody_retry_budget_exhausted_total",
        "custody_documents_terminal_total",
    ):
        assert needed in named, needed


def test_monitoring_dashboard_names_only_exported_metrics() -> None:
    """Every panel's query names metrics the code exports."""
    dash = json.loads((DEPLOY / "monitoring/dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    named = set().union(*(_named(e) for e in exprs))
    assert len(exprs) >= 10 and named <= exported(), sorted(named - exported())
    assert not [e for e in exprs if re.search(r"\btemporal_", e)]


def test_monitoring_exported_names_are_read_from_the_code() -> None:
    """The reader finds the edge's and the workers' instruments (a guard on the guard)."""
    names = exported()
    assert {
        "custody_admission_rejections_total",
        "custody_ocr_seconds_per_page_count",
        "custody_breaker_state",
    } <= names
