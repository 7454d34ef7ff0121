"""The lock as the tests read it: ``uv.lock``'s resolution and the exported requirements files.

No uv needed: ``uv.lock`` is TOML and the exports are pip requirements files, so
the tests can prove them consistent with ``pyproject.toml`` on any machine.
Markers are evaluated for the machines Custody runs on (Linux x86_64, this
interpreter's Python), the only environment the lock holds.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements"
ENVIRONMENT = {**default_environment(), "sys_platform": "linux", "platform_machine": "x86_64"}


@dataclass(frozen=True)
class Pin:
    """One line of an exported requirements file: a name, its exact version, its hashes."""

    name: str
    version: str
    hashes: frozenset[str]


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@cache
def _packages() -> tuple[dict[str, Any], ...]:
    return tuple(tomllib.loads((ROOT / "uv.lock").read_text())["package"])


def project() -> dict[str, Any]:
    """``uv.lock``'s entry for Custody itself: what it depends on, as locked."""
    return next(p for p in _packages() if p["name"] == "custody")


def _applies(marker: str | None) -> bool:
    return marker is None or Marker(marker).evaluate(ENVIRONMENT)


def _package(dep: dict[str, Any]) -> dict[str, Any]:
    """The locked package a dependency entry names (by version where several are locked)."""
    found = [
        p
        for p in _packages()
        if p["name"] == dep["name"] and dep.get("version", p["version"]) == p["version"]
    ]
    live = [p for p in found if _applies(_resolution_marker(p))]
    return (live or found)[0]


def _resolution_marker(package: dict[str, Any]) -> str | None:
    markers = package.get("resolution-markers")
    return " or ".join(f"({m})" for m in markers) if markers else None


def closure(*extras: str, without: tuple[str, ...] = ()) -> dict[str, str]:
    """Every locked distribution ``custody[extras]`` installs here, name -> version."""
    root = project()
    todo = list(root.get("dependencies", []))
    for extra in extras:
        todo += root["optional-dependencies"][extra]
    found: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    while todo:
        dep = todo.pop()
        if not _applies(dep.get("marker")) or dep["name"] in without:
            continue
        package = _package(dep)
        wanted = [("", package.get("dependencies", []))]
        wanted += [(e, package["optional-dependencies"][e]) for e in dep.get("extra", [])]
        found[package["name"]] = package["version"]
        for extra, deps in wanted:
            if (package["name"], extra) not in seen:
                seen.add((package["name"], extra))
                todo += deps
    return found


def exported(name: str) -> dict[str, Pin]:
    """``requirements/NAME.txt`` for this environment: every pin, by canonical name."""
    text = (REQUIREMENTS / f"{name}.txt").read_text().replace("\\\n", " ")
    pins: dict[str, Pin] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        spec, *hashes = line.split("--hash=")
        req = Requirement(spec.strip())
        if req.marker is None or req.marker.evaluate(ENVIRONMENT):
            (version,) = [s.version for s in req.specifier if s.operator == "=="]
            key = canonicalize_name(req.name)
            pins[key] = Pin(key, version, frozenset(h.strip() for h in hashes))
    return pins
