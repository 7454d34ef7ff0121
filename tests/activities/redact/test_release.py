"""A release under a ``view: redacted`` policy, end to end on the real workers.

A synthetic referral is published by the real pipeline; the release's render
step makes (and checks) its redacted view with the default OCR engine, and
the recipient's outbox receives the view, not the evidence's pages, carrying
the release's watermark and identity like any released PDF.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pypdfium2 as pdfium
from temporalio.client import Client

from activities.egress.pdfmeta import read_identity
from activities.egress.readback import read_visible_mark
from activities.engines.base import OcrEngine
from activities.redact.plan import normal
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.view import SignedView
from custody import egress as eg
from custody.redactions import view_key
from custody.state.egress import add_policy, add_recipient
from starter.bench.referrals import write_set
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from tests.helpers import make_settings, recipient, running_pipeline

POLICY = eg.Policy(name="redacted", view="redacted", include=("searchable_pdf", "text"), c2pa=False)


async def test_release_view_redacted_delivers_the_checked_view(
    temporal_client: Client,
    temporal_address: str,
    tmp_path: Path,
    tenant: str,
    ocr_engine: OcrEngine,
) -> None:
    """The packet holds the redacted PDF (watermarked) and text, without the participant ID
    or clinician."""
    settings = make_settings(tmp_path / "home", temporal_address)
    [path] = write_set(tmp_path / "set", 1, seed=5)
    truth = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())["fields"]
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    async with running_pipeline(temporal_client, settings, ocr_engine) as custody:
        sub = await submit(custody, path, tenant=tenant)
        await wait(custody, sub.sha256, tenant=tenant)
        add_recipient(custody.store, recipient(tenant, "clinic-r", outbox))
        add_policy(custody.store, tenant, POLICY)
        started = await release(
            custody, [sub.sha256], to="clinic-r", policy="redacted", tenant=tenant, actor="test"
        )
        done = await asyncio.wait_for(wait_release(custody, started.release_id), 900)
        store = custody.store
    assert done.state is eg.ReleaseState.DELIVERED, done.code
    stem = f"document-{sub.sha256[:16]}-redacted"
    assert {f.name for f in done.files} == {f"{stem}.pdf", f"{stem}.txt"}
    delivered = outbox / done.release_id
    text = (delivered / f"{stem}.txt").read_text()
    released = (delivered / f"{stem}.pdf").read_bytes()
    identity = read_identity(released)
    assert identity is not None and identity.release_id == done.release_id
    assert read_visible_mark(released, [done.release_id]) == done.release_id
    pdf = pdfium.PdfDocument(released)
    layer = " ".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    pdf.close()
    for value in (truth["participant_id"], truth["clinician"]):
        assert normal(value) not in normal(text) and normal(value) not in normal(layer)
    signed = SignedView.model_validate_json(
        store.get(view_key(sub.sha256, tenant, DEFAULT_REDACTION.sha256()))
    )
    assert signed.view.approved_by == "test" and signed.view.check.leaks == 0
