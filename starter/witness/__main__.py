"""``python -m starter.witness``: ``custody witness serve`` for the embedded stack."""

from __future__ import annotations

import sys

from starter.cli.main import main

if __name__ == "__main__":
    main(["witness", "serve", *sys.argv[1:]])
