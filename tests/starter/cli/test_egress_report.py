"""``custody egress report --field participant_id=VALUE``: the accounting of disclosures.

A synthetic referral (starter.bench.referrals) is published by the real pipeline (dev
server, the session's engine) into a sealed store with a development keyring, so the
keyed field index exists; it is then released for real twice, to two outbox recipients:
once under a policy whose purpose is ``treatment``, once under the default policy with the
request's own purpose. The report finds both through the index, oldest first, with the
purposes they were recorded with, and a read through the SDK with the purpose it
asked; another participant's report is empty.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.keys import keyring as keys
from custody.state.egress import add_policy, add_recipient
from custody.stores import open_store
from starter.bench.referrals import write_set
from starter.client.read import result as read_result
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from starter.evidence.disclosures import KEYS
from tests.helpers import cli, make_settings, recipient, running_pipeline


async def test_egress_report_lists_each_release_of_one_patient_with_its_purpose(
    temporal_client: Client, temporal_address: str, tmp_path: Path, ocr_engine: OcrEngine
) -> None:
    """Two real releases of one referral: two disclosures, each key as the issue spells it."""
    settings = make_settings(tmp_path, temporal_address)
    keys.init_keyring(tmp_path / "keys", development=True)
    store = open_store(settings)
    [path] = write_set(tmp_path / "set", 1, seed=7)
    participant = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())["fields"][
        "participant_id"
    ]
    tenant = "disclose"
    care = eg.Policy(name="care", purpose="treatment")
    add_policy(store, tenant, care)
    asked = (("clinic-a", "care", None), ("insurer-b", "default", "payment"))
    results = []
    async with running_pipeline(temporal_client, settings, ocr_engine, store=store) as custody:
        sub = await submit(custody, path, tenant=tenant)
        assert (await wait(custody, sub.sha256, tenant=tenant)).state == "published"
        for name, policy, purpose in asked:
            add_recipient(store, recipient(tenant, name, tmp_path / name))
            started = await release(
                custody, [sub.sha256], to=name, policy=policy, tenant=tenant, actor="op",
                purpose=purpose,
            )  # fmt: skip
            results.append(await asyncio.wait_for(wait_release(custody, started.release_id), 240))
        read_result(custody, sub.sha256, tenant, actor="sdk:clerk", purpose="research")
    assert [r.state for r in results] == [eg.ReleaseState.DELIVERED] * 2
    code, rows = cli(settings, "egress", "report", "--field", f"participant_id={participant}",
                     tenant=tenant)  # fmt: skip
    assert code == 0 and [tuple(r) for r in rows] == [KEYS, KEYS, KEYS]
    assert [(r["recipient"], r["release_id"], r["purpose"]) for r in rows] == [
        ("clinic-a", results[0].release_id, "treatment"),
        ("insurer-b", results[1].release_id, "payment"),
        ("sdk:clerk", None, "research"),  # a read, with the purpose it was asked with
    ]
    assert all("release of 1" in r["description"] for r in rows[:2])
    assert "read of 1" in rows[2]["description"]
    code, since = cli(settings, "egress", "report", "--field", f"participant_id={participant}",
                      "--since", rows[1]["at"], tenant=tenant)  # fmt: skip
    assert (code, [r["release_id"] for r in since]) == (0, [results[1].release_id, None])
    code, none = cli(settings, "egress", "report", "--field", "participant_id=NOBODY-1",
                     tenant=tenant)  # fmt: skip
    assert (code, none) == (0, [])
