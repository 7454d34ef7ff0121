"""The ``custody`` CLI as a script would use it: real subprocesses, JSON, exit codes.

These are the subprocess contract; every other CLI test runs the command in
this process (``tests.helpers.cli``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from custody.settings import Settings
from starter.cli.output import Exit
from tests.helpers import Rig, custody_subprocess


async def test_cli_submit_status_result_ls_with_exit_codes(rig: Rig) -> None:
    """submit --wait reports each document; the worst outcome sets the exit status."""
    settings, tenant = rig.settings(), rig.tenant
    good = rig.corpus / "ocr_gt" / "tess_phototest.tif"
    bad = rig.corpus / "bad_inputs" / "elf_renamed.pdf"
    async with rig.pipeline(settings):
        rc, out = await custody_subprocess(
            settings, "submit", str(good), str(bad), "--wait", tenant=tenant
        )
        assert rc == 3, out  # one rejected
        docs = {d["input"]: d for d in out["documents"]}
        assert docs[str(good)]["state"] == "published"
        assert docs[str(bad)]["state"] == "rejected"
        assert docs[str(bad)]["code"] == "UNSUPPORTED_TYPE"
        sha = docs[str(good)]["sha256"]
        rc, status = await custody_subprocess(settings, "status", str(good), tenant=tenant)
        assert rc == 0 and status["state"] == "published" and status["sha256"] == sha
        rc, res = await custody_subprocess(settings, "result", sha, tenant=tenant)
        assert rc == 0 and res["record"]["text_sha256"] and len(res["text"]) > 100
        rc, rows = await custody_subprocess(settings, "ls", "--state", "rejected", tenant=tenant)
        assert rc == 0 and [r["sha256"] for r in rows] == [docs[str(bad)]["sha256"]]
        rc, again = await custody_subprocess(settings, "submit", str(good), tenant=tenant)
        assert rc == 0 and again["documents"][0]["deduplicated"] is True


async def test_cli_unknown_document_exits_not_found(rig: Rig) -> None:
    """A SHA-256 nobody submitted is exit status 5 with a coded JSON error."""
    settings = rig.settings()
    async with rig.pipeline(settings):
        rc, out = await custody_subprocess(settings, "status", "0" * 64, tenant=rig.tenant)
    assert rc == 5 and out["error"] == "NOT_FOUND"


async def test_cli_unreachable_temporal_exits_6(tmp_path: Path) -> None:
    """With no server listening the CLI says so with exit status 6, not a traceback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = Settings(home=tmp_path, temporal_address=f"127.0.0.1:{port}", allow_plaintext=True)
    rc, out = await custody_subprocess(settings, "ls")
    assert rc == 6 and out["error"] == "UNREACHABLE"


@pytest.mark.parametrize("words", [("ls",), ("policies", "ls"), ("--help",)])
def test_cli_reader_gone_is_quiet(
    words: tuple[str, ...], temporal_address: str, tmp_path: Path
) -> None:
    """With stdout's reader gone (``custody ls | head -1``), the command says nothing on
    stderr (no "is the stack up?", no traceback) and exits 141, as a SIGPIPE'd tool does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODY_")}
    env |= {"CUSTODY_HOME": str(tmp_path), "CUSTODY_TEMPORAL_ADDRESS": temporal_address}
    env |= {"CUSTODY_ALLOW_PLAINTEXT": "true"}
    read, write = os.pipe()
    os.close(read)  # the reader left before the first byte, as head does after its line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "starter.cli", *words],
            env=env,
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.stderr.decode().strip() == ""
    assert done.returncode == Exit.PIPE_CLOSED
