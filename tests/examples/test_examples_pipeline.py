"""``make run``'s examples through the real pipeline: each is published, none waits in review.

The examples are what a newcomer meets first; a document in review would sit
in the table as ``review`` (exit 10) waiting for a person. So each must read
above the review line (``CUSTODY_CONFIDENCE_REVIEW``) on the default engine,
with no fields policy, as ``make run`` submits them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from custody.models import DocState
from starter.client.submit import submit, wait
from tests.helpers import Rig

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "make_examples.py"


async def test_examples_publish_and_none_lands_in_review(rig: Rig, tmp_path: Path) -> None:
    """referral.png, discharge.pdf and fax.tif: published, above the review line."""
    out = tmp_path / "examples"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, timeout=120)
    settings = rig.settings()
    results = {}
    async with rig.pipeline(settings) as custody:
        for name in ("referral.png", "discharge.pdf", "fax.tif"):
            sub = await submit(custody, out / name, tenant=rig.tenant)
            results[name] = await wait(custody, sub.sha256, tenant=rig.tenant)
    states = {n: (r.state, r.mean_confidence) for n, r in results.items()}
    assert all(r.state is DocState.PUBLISHED for r in results.values()), states
    line = settings.confidence_review
    assert all((r.mean_confidence or 0) >= line for r in results.values()), states
