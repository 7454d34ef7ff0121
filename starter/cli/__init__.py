"""The ``custody`` command line: one lazy command registry, one output module."""

from starter.cli.main import main

__all__ = ["main"]
