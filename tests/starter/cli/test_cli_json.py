"""Every ``custody`` command with ``--json``: exactly one JSON document on stdout, its exit status.

Each case runs in a home of its own, with Temporal pointed at a closed port
so the commands that need it fail fast with UNREACHABLE. The commands that
start processes or servers (``up``, ``serve``, ``codec-server``, ``chaos``,
``bench``) run as ``python -m starter.cli``, as a script would, in an error
path or their shortest form, side by side; every other case runs in this
process (``tests.helpers.cli``: the same parser, handler and output), since a
fresh interpreter spends seconds importing before it answers.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from custody.errors import Code
from custody.keys import keyring as keys
from custody.settings import Settings
from starter.cli.main import run
from starter.cli.output import Exit, captured
from starter.cli.registry import COMMANDS, build_parser

ZERO = "0" * 64
REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Case:
    command: str  # the command's words, as the parser knows them
    args: tuple[str, ...] = ()  # "{home}" is the case's own CUSTODY_HOME
    exit: Exit = Exit.OK
    keyring: bool = False  # a development keyring in the home first
    env: tuple[tuple[str, str], ...] = ()
    has: str = ""  # a key the answer must carry
    #: A deployment kept without keys on purpose (CUSTODY_ALLOW_PLAINTEXT), as in the
    #: suite; False: an ordinary home, where the SDK refuses to run without keys.
    plaintext: bool = True

    @property
    def id(self) -> str:
        words = [self.command, *self.args, *("=".join(kv) for kv in self.env)]
        words += ["(keyring)"] * self.keyring + ["(no plaintext)"] * (not self.plaintext)
        return " ".join(words).replace("{home}/", "")

    @property
    def in_process(self) -> bool:
        return self.command.split()[0] not in _STARTS_PROCESSES


#: Commands that start processes or serve: run as the console script would run them.
_STARTS_PROCESSES = frozenset({"up", "serve", "codec-server", "chaos", "bench"})


CASES = [
    Case("up", ("--detach",), Exit.CONFIG, env=(("CUSTODY_ENV", "production"),)),
    Case("down", has="stopped"),
    Case("submit", ("{home}/probe.bin",), Exit.UNREACHABLE),
    Case("status", (ZERO,), Exit.UNREACHABLE),
    Case("result", (ZERO,), Exit.UNREACHABLE),
    Case("ls", (), Exit.UNREACHABLE),
    Case("bench ocr", ("--corpus", "{home}/no-corpus"), Exit.USAGE),
    Case("bench intake", ("--burst", "2", "--big-mb", "1"), has="big_upload_mb_per_s"),
    Case("bench egress", ("--corpus", "{home}/no-corpus"), Exit.USAGE),
    Case("bench fairness", ("--b-docs", "1", "--ratio", "2"), has="contended_p95_s"),
    Case("bench scale", ("--corpus", "{home}/no-corpus"), Exit.USAGE),
    Case("bench fields", ("--corpus", "{home}/no-corpus"), Exit.USAGE),
    Case("bench redaction", ("--corpus", "{home}/no-corpus"), Exit.USAGE),
    Case("bench ledger", ("--events", "20", "--writers", "2"), has="sizes"),
    Case("witness key", has="vkey"),
    Case("witness trust", (), Exit.USAGE),
    Case("witness serve", ("--port", "70000"), Exit.USAGE),
    Case("evidence find", ("--field", "participant_id"), Exit.USAGE),
    Case("fields policy show", has="policy"),
    Case("fields policy set", ("--file", "{home}/missing.json"), Exit.NOT_FOUND),
    Case("fields policy set", ("--file", "{home}"), Exit.USAGE),  # a folder, not a file
    Case("bench preview", ("--page", "{home}/no-page.png"), Exit.USAGE),
    Case(
        "bench abuse",
        ("--seconds", "1", "--slow", "2", "--flood", "5", "--big-headers", "1"),
        has="b_accept_s",
    ),
    Case("verify", ("--all",), has="reports"),
    Case("verify", (), Exit.USAGE),
    Case("audit verify", has="reports"),
    Case("audit log", (ZERO,), Exit.NOT_FOUND),
    Case("audit seal"),
    Case("evidence show", (ZERO,), Exit.NOT_FOUND),
    Case("evidence export", (ZERO, "-o", "{home}/bundle.zip"), Exit.NOT_FOUND),
    Case("evidence find"),
    Case("evidence keys", has="active"),
    Case("quarantine ls"),
    Case("quarantine release", (ZERO, "--reason", "r"), Exit.UNREACHABLE),
    Case("quarantine reject", (ZERO, "--reason", "r"), Exit.NOT_FOUND),
    Case("retention sweep", (), Exit.UNREACHABLE),
    Case("retention sweep", ("--no-orphan-check", "--dry-run"), has="expired"),
    # A decision with no identity (CUSTODY_OPERATOR_CREDENTIAL unset): refused, exit 12.
    Case("retention approve", (ZERO, "--policy", "evidence"), Exit.DENIED),
    Case("retention approve", (ZERO, "--policy", "nope"), Exit.USAGE),
    Case("retention apply", ("--dry-run",), has="dispositions"),
    Case("retention apply", (), Exit.DENIED),
    Case("deletions ls"),
    Case("deletions approve", ("0" * 16,), Exit.DENIED),  # no identity: refused, exit 12
    Case("release", (ZERO, "--to", "bob"), Exit.UNREACHABLE),
    Case("release", (ZERO,), Exit.USAGE),  # no --to
    Case("release", ("approve", "not-an-id"), Exit.USAGE),
    Case("release", ("approve", "0" * 32), Exit.UNREACHABLE),
    Case("redact", (ZERO,), Exit.REJECTED, keyring=True, has="error"),
    Case("recipients add", ("bob", "--outbox", "{home}/outbox"), has="name"),
    Case("recipients ls"),
    Case("recipients revoke", ("nobody",), Exit.NOT_FOUND),
    Case("policies add", ("x", "--file", "{home}/missing.json"), Exit.NOT_FOUND),
    Case("policies ls"),
    Case("policies show", ("default",), has="policy"),
    Case("egress ls"),
    Case("egress report", ("--field", "participant_id"), Exit.USAGE),
    Case("egress report", ("--field", "participant_id=P-1"), Exit.USAGE),  # no keyring
    Case("egress report", ("--field", "participant_id=P-1"), keyring=True),
    Case("egress verify", ("not-an-id",), Exit.USAGE),
    Case("egress identify", ("{home}/probe.bin",), has="match"),
    Case("egress identify", ("{home}/missing.bin",), Exit.NOT_FOUND),
    Case("tenants add", ("clinic-a",), has="api_key"),
    Case("tenants ls"),
    Case("tenants revoke", ("nobody",), Exit.NOT_FOUND),
    Case("tenants keys add", ("nobody", "--scope", "read"), Exit.NOT_FOUND),
    Case("tenants keys ls", ("nobody",), Exit.NOT_FOUND),
    Case("tenants keys revoke", ("nobody", "k-none"), Exit.NOT_FOUND),
    Case("review ls", (), Exit.UNREACHABLE),
    Case("review show", (ZERO,), Exit.UNREACHABLE),
    Case("review resolve", (ZERO, "--approve"), Exit.UNREACHABLE),
    Case("operators bootstrap", ("root",), has="credential"),
    Case("operators add", ("bob", "--role", "reviewer"), Exit.DENIED),
    Case("operators add", ("bob", "--role", "boss"), Exit.USAGE),
    Case("operators ls"),
    Case("operators revoke", ("bob",), Exit.DENIED),
    Case("serve", ("--port", "0"), Exit.UNREACHABLE),
    Case("admission pause", has="paused"),
    Case("admission resume", has="paused"),
    Case("admission status", (), Exit.UNREACHABLE),
    Case("admission manual"),
    Case("admission release", (ZERO,), Exit.UNREACHABLE),
    Case("pools set", ("ocr", "2"), has="limits"),
    Case("pools set", ("ocr", "0"), Exit.USAGE),
    Case("pools reset", ("ocr",), has="limits"),
    Case("pools status", has="limits"),
    Case("chaos", ("--list",), has="worker-kill"),
    Case("chaos", ("no-such-scenario",), Exit.USAGE),
    Case("keys init", ("--development",), has="payload_key"),
    Case("keys rotate", (), Exit.DENIED, keyring=True),
    Case("keys list", keyring=True, has="payload_keys"),
    Case("keys list", (), Exit.CONFIG),
    Case("keys shred", ("t1", "--confirm", "t2"), Exit.USAGE),
    Case("codec-server", (), Exit.CONFIG),
    Case("ocr config", has="active"),
    Case("ocr config history"),
    Case("ocr config rollback", ("--reason", "r"), Exit.USAGE),
    Case("ocr config pin", ("abc", "--reason", "r"), Exit.USAGE),
    Case("ocr config unpin", ("--reason", "r"), has="action"),
    Case("ui", ("--tenant", "acme", "--code", "PAGE_LIMIT"), has="links"),
    Case("ui", ("--code", "x' OR 'a"), Exit.USAGE),
    Case("no-such-command", (), Exit.USAGE),
    Case("status", (), Exit.USAGE),  # the SHA-256 is missing
    # Bad input of every kind: a coded answer and its status, never a traceback.
    Case("ls", ("--state", "bogus"), Exit.USAGE),
    Case("ls", ("--limit", "0"), Exit.USAGE),
    Case("submit", ("{home}/missing.pdf",), Exit.NOT_FOUND),
    Case("submit", ("{home}/probe.bin", "{home}/missing.pdf"), Exit.NOT_FOUND),
    Case("status", ("{home}/missing.pdf",), Exit.NOT_FOUND),
    Case("result", ("abc",), Exit.USAGE),  # too short to be a prefix
    Case("result", ("abcdef01",), Exit.NOT_FOUND),  # a prefix of no document here
    Case("up", ("--tenant", "t1"), Exit.USAGE),  # --tenant means nothing to it
    Case("pools status", ("--tenant", "t1"), Exit.USAGE),
    # An ordinary home without keys is the wrong folder: the SDK refuses, exit 9.
    Case("ls", (), Exit.CONFIG, plaintext=False),
    Case("submit", ("{home}/probe.bin",), Exit.CONFIG, plaintext=False),
]

Answer = tuple[int, str, str]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _home(case: Case, home: Path) -> list[str]:
    """The case's home made ready, and its command line."""
    home.mkdir(parents=True)
    (home / "probe.bin").write_bytes(b"%PDF-1.7 not really")
    if case.keyring:
        keys.init_keyring(home / "keys", development=True)
    return [*case.command.split(), *(a.format(home=home) for a in case.args), "--json"]


def _run(case: Case, home: Path, port: int) -> Answer:
    argv = _home(case, home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
    env |= {"CUSTODY_HOME": str(home), "CUSTODY_TEMPORAL_ADDRESS": f"127.0.0.1:{port}"}
    env |= {"CUSTODY_ALLOW_PLAINTEXT": str(case.plaintext).lower(), **dict(case.env)}
    proc = subprocess.run(
        [sys.executable, "-m", "starter.cli", *argv],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _run_here(case: Case, home: Path, port: int) -> Answer:
    """The case in this process, its settings as its environment would make them."""
    argv = _home(case, home)
    named = {k.removeprefix("CUSTODY_").lower(): v for k, v in case.env}
    settings = Settings(
        home=home, temporal_address=f"127.0.0.1:{port}", allow_plaintext=case.plaintext, **named
    )
    out, err = io.StringIO(), io.StringIO()
    with captured(out), redirect_stderr(err):
        code = run(argv, settings)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Answer]:
    """Every case's exit status, stdout and stderr: the scripts a few at a time, beside
    the in-process cases one after another."""
    root, port = tmp_path_factory.mktemp("cli-json"), _closed_port()
    homes = {c.id: root / f"home-{i}" for i, c in enumerate(CASES)}
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {c.id: pool.submit(_run, c, homes[c.id], port) for c in CASES if not c.in_process}
        here = {c.id: _run_here(c, homes[c.id], port) for c in CASES if c.in_process}
        return here | {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_cli_json_prints_one_document_and_its_exit_status(
    case: Case, answers: dict[str, Answer]
) -> None:
    """stdout parses as exactly one JSON document; the exit status is the documented one."""
    rc, out, err = answers[case.id]
    assert "Traceback" not in err, err[-3000:]
    doc: Any = json.loads(out)  # raises on a second document or a banner around it
    assert rc == case.exit, (out[-2000:], err[-2000:])
    if case.exit is not Exit.OK:
        assert set(doc) == {"error", "message"} and doc["error"] in Code.__members__, doc
    if case.has:
        assert case.has in doc, doc


def _leaves(parser: argparse.ArgumentParser, path: str) -> set[str]:
    found = {path} if parser.get_default("handler") else set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found |= _leaves(child, f"{path} {name}")
    return found


def test_cli_json_cases_cover_every_command() -> None:
    """Each command and subcommand the registry builds has at least one case above."""
    leaves: set[str] = set()
    for name in COMMANDS:
        parser = build_parser([name])
        top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        leaves |= _leaves(top.choices[name], name)
    assert leaves, "no command was built"
    assert leaves - {c.command for c in CASES} == set()


def _imported(*argv: str, home: Path) -> tuple[set[str], str]:
    """The modules ``python -m starter.cli ARGV`` imports (``-X importtime``), and its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
    env |= {"CUSTODY_HOME": str(home), "CUSTODY_TEMPORAL_ADDRESS": f"127.0.0.1:{_closed_port()}"}
    env |= {"CUSTODY_ALLOW_PLAINTEXT": "true"}  # so status reaches the connection it fails
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "starter.cli", *argv],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return names, proc.stdout


_HEAVY = ("numpy", "torch", "easyocr", "PIL", "pypdfium2", "cv2", "activities", "workflows")
_TEST_ONLY = ("httpx", "moto", "pytest", "hypothesis")
_OTHER_ROLES = ("starter.bench", "starter.chaos", "starter.edge", "starter.local")


def test_cli_status_imports_no_ocr_bench_chaos_or_test_dependency(tmp_path: Path) -> None:
    """``custody status`` loads neither OCR, benchmarks, chaos, the edge nor a test-only package."""
    names, out = _imported("status", ZERO, "--json", home=tmp_path)
    assert json.loads(out)["error"] == "UNREACHABLE"  # it ran: the import list is real
    loaded = {n for n in names if n.split(".")[0] in _HEAVY + _TEST_ONLY}
    loaded |= {n for n in names if n.startswith(_OTHER_ROLES)}
    assert loaded == set()


def test_cli_help_lists_every_command_without_importing_one(tmp_path: Path) -> None:
    """``custody --help`` names each command of the table and imports no command module."""
    names, out = _imported("--help", home=tmp_path)
    commands = {n for n in names if n.startswith("starter.cli.")}
    assert commands <= {
        "starter.cli.main",
        "starter.cli.options",
        "starter.cli.output",
        "starter.cli.registry",
    }
    assert all(f"    {name} " in out for name in COMMANDS), out
