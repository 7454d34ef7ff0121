"""The ``custody tenants``, ``admission`` and ``pools`` command groups, run in-process."""

from __future__ import annotations

import json

import pytest

from custody.settings import Settings
from custody.state.pools import read_limits
from custody.stores import open_store
from starter.cli.registry import build_parser
from starter.client.pause import is_paused
from starter.edge import tenants
from tests.starter.edge.conftest import SettingsFactory


def _run(argv: list[str], settings: Settings) -> int:
    args = build_parser(argv).parse_args(argv)
    code: int = args.handler(args, settings)
    return code


def test_tenants_cli_add_shows_key_once_and_revoke_blocks_it(
    settings_for: SettingsFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tenants add --json`` prints a working api_key; ``ls`` hides it; ``revoke`` ends it."""
    settings = settings_for()
    assert _run(["tenants", "add", "clinic-a", "--json"], settings) == 0
    key = json.loads(capsys.readouterr().out)["api_key"]
    assert _run(["tenants", "ls", "--json"], settings) == 0
    listing = capsys.readouterr().out
    assert _run(["tenants", "revoke", "clinic-a"], settings) == 0
    store = open_store(settings)
    assert key not in listing and json.loads(listing)[0]["name"] == "clinic-a"
    with pytest.raises(tenants.AuthError):
        tenants.authenticate(store, key)


def test_tenants_cli_ls_text_is_a_line_each_or_a_sentence_when_none(
    settings_for: SettingsFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--json`` a listing prints one line per row, or its sentence when empty."""
    settings = settings_for()
    assert _run(["tenants", "ls"], settings) == 0
    assert capsys.readouterr().out == "no tenants\n"
    for name in ("clinic-a", "clinic-b"):
        assert _run(["tenants", "add", name], settings) == 0
    assert _run(["tenants", "revoke", "clinic-b"], settings) == 0
    capsys.readouterr()
    assert _run(["tenants", "ls"], settings) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [(line.split()[0], line.split()[-1]) for line in lines] == [
        ("clinic-a", "active"),
        ("clinic-b", "revoked"),
    ]


def test_admission_cli_pause_and_resume_are_stored(settings_for: SettingsFactory) -> None:
    """``admission pause`` and ``resume`` flip the state every edge reads from the store."""
    settings = settings_for()
    store = open_store(settings)
    _run(["admission", "pause"], settings)
    paused = is_paused(store)
    _run(["admission", "resume"], settings)
    assert paused is True and is_paused(store) is False


def test_pools_cli_set_status_reset_and_bounds(
    settings_for: SettingsFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pools set`` stores a live limit, ``status`` shows it with defaults, ``reset`` drops it."""
    settings = settings_for(ocr_concurrency=1, io_concurrency=8)
    assert _run(["pools", "set", "ocr", "2", "--json"], settings) == 0
    after_set = json.loads(capsys.readouterr().out)
    assert _run(["pools", "set", "ocr", "0", "--json"], settings) == 2  # out of range
    capsys.readouterr()
    assert _run(["pools", "reset", "ocr", "--json"], settings) == 0
    after_reset = json.loads(capsys.readouterr().out)
    assert after_set["limits"] == {"ocr": 2, "io": 8} and after_set["overridden"] == ["ocr"]
    # The OCR default: one engine lane plus one document staged ahead (CUSTODY_OCR_PREFETCH).
    assert after_reset["limits"] == {"ocr": 2, "io": 8} and after_reset["overridden"] == []
    assert read_limits(open_store(settings)) == {}
