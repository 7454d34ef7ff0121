"""The lock is current and complete for every install path, and each path installs from it.

``make lock-check`` (CI) asks uv itself; these tests need no uv, so a stale lock
fails on any machine: ``uv.lock`` must record ``pyproject.toml``'s requirements
as they are, and each exported file must pin exactly the lock's closure for its
path, every pin with hashes (``pip install --require-hashes`` refuses anything else).
"""

from __future__ import annotations

import re

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.lockfile import REQUIREMENTS, ROOT, closure, exported, project, pyproject

#: requirements/NAME.txt -> (the extras it installs, what it leaves out on purpose).
PATHS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "run": ((), ()),  # make run, and the CPU image
    "ci": (("test", "bench", "easyocr"), ()),  # make test and .ci/run
    "gpu": (("gpu", "easyocr"), ("onnxruntime",)),  # the GPU image: onnxruntime-gpu instead
}
#: Libraries that parse untrusted bytes: pinned to one reviewed version in pyproject itself.
DECODERS = ("pypdfium2", "pillow", "pikepdf", "c2pa-python", "opencv-python-headless")

Requested = set[tuple[str, str, frozenset[str], str]]


def _requested_in_pyproject() -> Requested:
    """(name, specifier, extras, the extra that asks) for every requirement pyproject states."""
    project_table = pyproject()["project"]
    sources = [("", project_table["dependencies"])]
    sources += list(project_table["optional-dependencies"].items())
    found: Requested = set()
    for extra, lines in sources:
        for line in lines:
            req = Requirement(line)
            name = canonicalize_name(req.name)
            found.add((name, str(req.specifier), frozenset(req.extras), extra))
    return found


def _recorded_in_lock() -> Requested:
    """The same, as ``uv.lock`` recorded pyproject when it was last locked."""
    found: Requested = set()
    for dep in project()["metadata"]["requires-dist"]:
        marker = dep.get("marker", "")
        extra = re.fullmatch(r"extra == '([\w-]+)'", marker)
        assert marker == "" or extra, f"a marker the test cannot read: {marker}"
        spec = str(SpecifierSet(dep.get("specifier", "")))
        found.add((dep["name"], spec, frozenset(dep.get("extras", [])), extra[1] if extra else ""))
    return found


def test_lock_records_pyproject_as_it_is() -> None:
    """Every requirement and extra in pyproject is the one uv.lock was resolved for."""
    assert _recorded_in_lock() == _requested_in_pyproject()
    extras = set(pyproject()["project"]["optional-dependencies"])
    assert set(project()["metadata"]["provides-extras"]) == extras


@pytest.mark.parametrize("path", sorted(PATHS))
def test_lock_export_pins_its_paths_closure_with_hashes(path: str) -> None:
    """requirements/PATH.txt pins exactly the lock's closure for its extras, each with a hash."""
    extras, without = PATHS[path]
    pins = exported(path)
    assert {name: pin.version for name, pin in pins.items()} == closure(*extras, without=without)
    assert all(pin.hashes for pin in pins.values()), [p.name for p in pins.values() if not p.hashes]


def test_lock_run_path_holds_no_torch_and_no_test_or_bench_tool() -> None:
    """What ``make run`` and the image install has no torch, CUDA or anything test-only."""
    names = set(exported("run"))
    heavy = {"torch", "torchvision", "easyocr", "matplotlib", "httpx", "pytest", "moto"}
    assert not names & heavy and not {n for n in names if n.startswith("nvidia-")}
    assert "onnxruntime" in names and "onnxruntime-gpu" not in names


def test_lock_gpu_path_swaps_onnxruntime_for_its_cuda_build() -> None:
    """The GPU image gets onnxruntime-gpu alone: both wheels write the module ``onnxruntime``."""
    names = set(exported("gpu"))
    assert "onnxruntime-gpu" in names and "onnxruntime" not in names
    assert {"torch", "easyocr"} <= names


def test_lock_decoders_are_pinned_to_one_reviewed_version() -> None:
    """pdfium, Pillow, pikepdf, c2pa and OpenCV change only when pyproject's pin does."""
    pinned = {
        name: spec
        for name, spec, _, extra in _requested_in_pyproject()
        if extra == "" and name in DECODERS
    }
    assert set(pinned) == set(DECODERS)
    for name, spec in pinned.items():
        (version,) = re.fullmatch(r"==([\w.]+)", spec).groups()  # type: ignore[union-attr]
        assert exported("run")[name].version == version, name


@pytest.mark.parametrize("name", ["uv", "build", "checkov"])
def test_lock_compiled_pins_match_their_inputs(name: str) -> None:
    """requirements/NAME.txt (make lock) pins what NAME.in asks for, with hashes."""
    wanted = [
        Requirement(line)
        for line in (REQUIREMENTS / f"{name}.in").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    pins = exported(name)
    for req in wanted:
        pin = pins[canonicalize_name(req.name)]
        assert req.specifier.contains(pin.version) and pin.hashes, pin


def test_lock_every_install_path_reads_a_hashed_file() -> None:
    """Makefile, CI and both images install from requirements/ with hashes, no extra index."""
    make = (ROOT / "Makefile").read_text()
    docker = (ROOT / "deploy" / "Dockerfile").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "--require-hashes" in make and "--require-hashes" in docker
    for path in ("run", "ci", "checkov", "uv", "build"):
        assert f"requirements/{path}.txt" in make, path
    assert "requirements/${REQUIREMENTS}.txt" in docker and "ARG REQUIREMENTS=run" in docker
    for text in (make, docker, ci):
        assert not re.search(r"--(extra-)?index-url|--find-links|pip install [^-]", text)
    assert "make lock-check" in ci and "make test-venv" in ci
