"""``custody ... --help`` says what each option means for that command, and nothing more.

Every parser the registry builds is walked: each argument of each command has
its own help line, and ``--tenant`` (shared by every command) is said as that
command means it, or left out (and refused) where it means nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest

from custody.errors import UsageError
from custody.models import DocState
from custody.settings import Settings
from starter.cli.main import run
from starter.cli.options import TENANT_HELP
from starter.cli.output import Exit, captured
from starter.cli.registry import COMMANDS, build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every runnable command, by its words after ``custody``, with its parser."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser) -> None:
        if parser.get_default("handler") is not None:
            found[parser.prog.partition(" ")[2]] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in dict.fromkeys(action.choices.values()):
                    walk(child)

    for name in COMMANDS:
        top = next(
            a for a in build_parser([name])._actions if isinstance(a, argparse._SubParsersAction)
        )
        walk(top.choices[name])
    return found


def _help(*words: str, tmp_path: Path) -> str:
    out = io.StringIO()
    with captured(out):
        code = run([*words, "--help"], Settings(home=tmp_path))
    assert code == Exit.OK
    return out.getvalue()


def test_cli_help_every_argument_of_every_command_says_what_it_is() -> None:
    """No option or argument of any command is listed without a line of help."""
    unexplained = [
        f"{words}: {action.dest}"
        for words, parser in _commands().items()
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        and not action.help
    ]
    assert unexplained == []


def test_cli_help_tenant_is_said_per_command_and_only_where_it_means_something(
    tmp_path: Path,
) -> None:
    """Every command has its own ``--tenant`` line; ``up`` and ``serve`` list none."""
    commands = _commands()
    assert set(commands) - set(TENANT_HELP) == set()  # a new command says what a tenant is
    for words in ("up", "serve", "pools set", "tenants add", "bench ocr"):
        assert TENANT_HELP[words] is None
        assert "--tenant" not in _help(*words.split(), tmp_path=tmp_path)
    submit = _help("submit", tmp_path=tmp_path)
    policies = _help("policies", "add", tmp_path=tmp_path)
    assert "the tenant submitting them" in " ".join(submit.split())
    assert "the tenant the policy is for" in " ".join(policies.split())
    assert "tenant the document belongs to\n" not in submit + policies  # the old shared line


def test_cli_help_ls_state_and_limit_are_explained(tmp_path: Path) -> None:
    """``ls --help`` lists every state ``--state`` takes and says what ``--limit`` bounds."""
    text = " ".join(_help("ls", tmp_path=tmp_path).split())
    assert all(state.value in text for state in DocState)
    assert "--limit N at most N documents" in text


def test_cli_tenant_where_it_means_nothing_is_refused(tmp_path: Path) -> None:
    """``custody pools status --tenant t`` is a usage error, not a silently ignored option."""
    out = io.StringIO()
    with captured(out):
        code = run(["pools", "status", "--tenant", "t1", "--json"], Settings(home=tmp_path))
    assert code == Exit.USAGE and '"USAGE"' in out.getvalue()
    assert not (tmp_path / "objects").exists()  # refused before anything ran


def test_cli_help_bench_one_of_options_default_to_their_first_choice_and_say_so(
    tmp_path: Path,
) -> None:
    """``--engine``, ``--store`` and ``--gpu-provider`` take one of their choices, the
    first when not given, and their help names that default."""
    commands = _commands()
    for words, flag, first, other in (
        ("bench fairness", "--engine", "tesseract", "rapidocr"),
        ("bench ledger", "--store", "local", "s3"),
        ("bench ocr", "--gpu-provider", "cuda", "tensorrt"),
    ):
        parser, dest = commands[words], flag[2:].replace("-", "_")
        assert getattr(parser.parse_args([]), dest) == first
        assert getattr(parser.parse_args([flag, other]), dest) == other
        assert f"(default: {first})" in " ".join(_help(*words.split(), tmp_path=tmp_path).split())
        with contextlib.redirect_stderr(io.StringIO()), pytest.raises(UsageError) as refused:
            parser.parse_args([flag, "nothing"])
        assert "invalid choice" in str(refused.value.detail)
