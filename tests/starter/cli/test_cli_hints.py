"""What the CLI prints can be used as printed: hints typed literally work, prefixes name documents.

One real document is published for the module (the session's engine) by
``custody submit --wait`` in text mode, as a person runs it. Each hint the
commands print is then followed exactly as printed: the ``custody result``
of the submit table, the shell line ``evidence export`` gives to verify the
bundle, and the fixes the refusals name. Prefixes are resolved within the
tenant from the store; an ambiguous one is made by adding an intake object
whose SHA-256 shares the document's first 8 characters, in a copy of the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import shlex
import shutil
import subprocess
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import ids
from custody.settings import Settings
from custody.stores.local import LocalStore
from starter.cli.main import run
from starter.cli.output import Exit, captured
from tests.helpers import cli, make_settings, running_pipeline
from tests.starter.edge.conftest import EdgeHarness, custody_client


@dataclass(frozen=True)
class Submitted:
    settings: Settings
    tenant: str
    sha256: str
    table: str  # what ``custody submit --wait`` printed for a person


def text(settings: Settings, *argv: str) -> tuple[int, str, str]:
    """``custody ARGV`` as a person runs it (no --json), in this process: status, out, err."""
    out, err = io.StringIO(), io.StringIO()
    with captured(out), redirect_stderr(err):
        code = run(list(argv), settings)
    return code, out.getvalue(), err.getvalue()


def typed(settings: Settings, line: str) -> tuple[int, str, str]:
    """A printed ``custody ...`` command line, run exactly as a person would type it."""
    words = shlex.split(line)
    assert words[0] == "custody", line
    return text(settings, *words[1:])


@pytest.fixture(scope="module")
async def submitted(
    temporal_client: Client,
    temporal_address: str,
    tmp_path_factory: pytest.TempPathFactory,
    corpus: Path,
    ocr_engine: OcrEngine,
) -> Submitted:
    home = tmp_path_factory.mktemp("cli-hints")
    settings = make_settings(home, temporal_address)
    scan = corpus / "ocr_gt" / "tess_phototest.tif"
    tenant = f"hints-{uuid4().hex[:8]}"
    async with running_pipeline(temporal_client, settings, ocr_engine):
        code, table, err = await asyncio.to_thread(
            text, settings, "submit", str(scan), "--wait", "--tenant", tenant
        )
    assert code == Exit.OK, table + err
    return Submitted(settings, tenant, hashlib.sha256(scan.read_bytes()).hexdigest(), table)


def test_cli_submit_table_prints_a_result_command_that_works(submitted: Submitted) -> None:
    """The RESULT column of a published row is a command; typed, it prints the text."""
    s = submitted
    [row] = [line for line in s.table.splitlines() if "published" in line]
    hint = row[row.index("custody result") :].strip()
    assert hint == f"custody result {s.sha256[:12]} --tenant {s.tenant}"
    assert str(s.settings.objects_dir) not in s.table  # no store file named as the result
    code, out, err = typed(s.settings, hint)
    assert code == Exit.OK, err
    assert "-- 1 pages; confidence p1=" in out


def test_cli_export_hint_verifies_the_bundle_when_typed(
    submitted: Submitted, tmp_path: Path
) -> None:
    """``evidence export`` prints a shell line; run as printed, every check of the bundle
    PASSes against this deployment's pinned key (the old hint left out ``--trust``)."""
    s = submitted
    bundle = tmp_path / "bundle.zip"
    code, out, err = text(
        s.settings, "evidence", "export", s.sha256[:10], "-o", str(bundle), "--tenant", s.tenant
    )
    assert code == Exit.OK, err
    line = out.splitlines()[-1].strip()
    assert "--trust " in line and "FPR" not in line
    done = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("PASS") and "FAIL" not in done.stdout


def test_cli_prefix_names_the_document_within_its_tenant(submitted: Submitted) -> None:
    """8 hex characters do wherever a SHA-256 goes; another tenant's documents are not found."""
    s = submitted
    code, status = cli(s.settings, "status", s.sha256[:8], tenant=s.tenant)
    assert code == Exit.OK and status["sha256"] == s.sha256
    code, shown = cli(s.settings, "evidence", "show", s.sha256[:8].upper(), tenant=s.tenant)
    assert code == Exit.OK and shown["record"]["sha256"] == s.sha256
    code, elsewhere = cli(s.settings, "audit", "log", s.sha256[:8], tenant="another-tenant")
    assert code == Exit.NOT_FOUND and elsewhere["error"] == "NOT_FOUND"
    code, short = cli(s.settings, "result", s.sha256[:7], tenant=s.tenant)
    assert code == Exit.USAGE and short["error"] == "USAGE"


def test_cli_ambiguous_prefix_lists_the_tenants_matches(
    submitted: Submitted, tmp_path: Path
) -> None:
    """A prefix two of the tenant's documents share exits 2, AMBIGUOUS_PREFIX, naming both
    (and no other tenant's); either name, typed in full, then works."""
    s = submitted
    settings = s.settings.model_copy(update={"home": tmp_path / "home", "store_dir": None})
    shutil.copytree(s.settings.objects_dir, settings.objects_dir)
    store = LocalStore(settings.objects_dir)
    twin = s.sha256[:8] + "0" * 56 if s.sha256[8] != "0" else s.sha256[:8] + "1" * 56
    store.put(ids.intake_key(twin, s.tenant), b"a second document with the same prefix")
    store.put(ids.intake_key(s.sha256[:8] + "f" * 56, "another-tenant"), b"not this tenant's")
    code, answer = cli(settings, "result", s.sha256[:8], tenant=s.tenant)
    assert code == Exit.USAGE and answer["error"] == "AMBIGUOUS_PREFIX"
    assert answer["matches"] == sorted([s.sha256, twin])
    code, out, err = text(settings, "result", s.sha256[:8], "--tenant", s.tenant)
    assert code == Exit.USAGE and s.sha256 in err and twin in err and out == ""
    code, shown = cli(settings, "evidence", "show", s.sha256[:12], tenant=s.tenant)
    assert code == Exit.OK and shown["record"]["sha256"] == s.sha256


def test_cli_keys_hint_works_when_typed(tmp_path: Path) -> None:
    """``keys list`` in a home without keys names ``custody keys init``; typed, keys exist."""
    settings = Settings(home=tmp_path)
    code, out, err = text(settings, "keys", "list")
    assert code == Exit.CONFIG and out == ""
    [hint] = re.findall(r"custody keys init", err)
    assert typed(settings, hint)[0] == Exit.OK
    assert text(settings, "keys", "list")[0] == Exit.OK


def test_cli_chaos_hint_works_when_typed(tmp_path: Path) -> None:
    """An unknown scenario names ``custody chaos --list``; typed, it lists the scenarios."""
    settings = Settings(home=tmp_path)
    code, _, err = text(settings, "chaos", "no-such-scenario")
    [hint] = re.findall(r"custody chaos --list", err)
    assert code == Exit.USAGE
    code, out, _ = typed(settings, hint)
    assert code == Exit.OK and "worker-kill" in out


async def test_cli_prefixes_are_not_taken_over_http(
    submitted: Submitted, temporal_client: Client
) -> None:
    """The edge answers the whole SHA-256 and refuses its prefix: short ids would let a
    caller enumerate a tenant's documents; only the CLI, an operator's tool, takes them."""
    s = submitted
    async with EdgeHarness(custody_client(temporal_client, s.settings)) as edge:
        auth = edge.tenant(s.tenant)
        whole = await edge.http.get(f"/v1/documents/{s.sha256}", headers=auth)
        short = await edge.http.get(f"/v1/documents/{s.sha256[:8]}", headers=auth)
    assert whole.status_code == 200 and whole.json()["sha256"] == s.sha256
    assert short.status_code in (400, 404) and s.sha256 not in short.text


def test_table_confidence_rounds_down_never_to_a_certainty() -> None:
    """An OCR mean of 0.996 prints 0.99, not 1.00; only a certainty prints 1.00."""
    from starter.cli.documents import _two_places_down

    assert [_two_places_down(c) for c in (0.996, 0.7849, 1.0, 0.0)] == [
        "0.99",
        "0.78",
        "1.00",
        "0.00",
    ]
