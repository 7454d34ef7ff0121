"""Every hostile or malformed file gets its coded verdict through the whole pipeline.

The engine is the real one wrapped in a call counter: a rejection must be
decided before OCR, so the counter stays at zero for every rejected file.
"""

from __future__ import annotations

import asyncio

from activities.scratch import StagingArea
from custody import ids
from custody.models import DocState, OutcomeRecord
from starter.client.submit import submit, wait
from tests.activities.test_validation import EXPECTED
from tests.helpers import CountingEngine, Rig


async def test_bad_inputs_get_coded_verdicts_without_ocr(rig: Rig) -> None:
    """Each REJECT row of the corpus manifest ends rejected with its code; OCR never runs."""
    settings, tenant = rig.settings(), rig.tenant
    engine = CountingEngine(rig.engine)
    rejects = {name: code for name, code in EXPECTED.items() if code is not None}
    assert len(rejects) >= 18
    async with rig.pipeline(settings, engine) as custody:
        subs = {
            name: await submit(
                custody, rig.corpus / "bad_inputs" / name, source_id="fuzz-feed", tenant=tenant
            )
            for name in rejects
        }
        results = await asyncio.gather(
            *(wait(custody, s.sha256, tenant=tenant) for s in subs.values())
        )
        verdicts = {name: (res.state, res.code) for name, res in zip(subs, results, strict=True)}
        for (name, sub), res in zip(subs.items(), results, strict=True):
            assert res.record_key == ids.outcome_key(sub.sha256, tenant, res.run_id)
            outcome = OutcomeRecord.model_validate_json(custody.store.get(res.record_key))
            assert outcome.code == rejects[name] and outcome.source_id == "fuzz-feed"
            # The rejected bytes are kept, verified, beside the verdict: nothing is lost.
            assert custody.store.exists(ids.source_key(sub.sha256, tenant))
    assert verdicts == {name: (DocState.REJECTED, code.value) for name, code in rejects.items()}
    assert engine.calls == 0
    assert StagingArea(settings.staging_path).files() == []
