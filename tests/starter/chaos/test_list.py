"""``custody chaos --list``: no stack, so it runs in every ``make test``."""

from __future__ import annotations

import argparse

import pytest

from custody.settings import Settings
from starter.chaos.scenarios import SCENARIOS
from starter.cli.chaos import register


def test_chaos_list_prints_one_scenario_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``custody chaos --list`` prints each scenario's name first on its own line."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"), argparse.ArgumentParser(add_help=False))
    args = parser.parse_args(["chaos", "--list"])
    assert args.handler(args, Settings()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == list(SCENARIOS)
