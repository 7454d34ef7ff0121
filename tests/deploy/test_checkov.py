"""``checkov -d deploy``: no failed check, and every skip carries its reason inline.

checkov pins older boto3, packaging and networkx than the project uses, so it
lives in a virtual environment of its own (``build/checkov-venv``, ignored by
git), created here on first use from PyPI; CI caches the folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.deploy.conftest import DEPLOY

CHECKOV = "checkov==3.3.30"
VENV = DEPLOY.parent / "build" / "checkov-venv"


def _checkov() -> Path:
    binary = VENV / "bin" / "checkov"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q", CHECKOV]
        subprocess.run(pip, check=True, timeout=900)
    return binary


def test_checkov_finds_no_failed_check() -> None:
    """Dockerfile, manifests and compose pass checkov; skips are few and all explained."""
    proc = subprocess.run(
        [str(_checkov()), "-d", str(DEPLOY), "--skip-download"] + ["-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    loaded = json.loads(proc.stdout)
    reports = loaded if isinstance(loaded, list) else [loaded]
    kinds = {r["check_type"] for r in reports}
    assert {"dockerfile", "kubernetes"} <= kinds, kinds
    failed = [c["check_id"] for r in reports for c in r["results"]["failed_checks"]]
    assert failed == [] and proc.returncode == 0, failed
    skipped = [c for r in reports for c in r["results"]["skipped_checks"]]
    assert len(skipped) <= 8 and all(
        len(c["check_result"]["suppress_comment"]) > 30 for c in skipped
    ), skipped
