"""A published store reached once per session, and the private copies modules start from.

Publishing a corpus scan costs a real pipeline run; modules that only read,
verify or tamper with what a run leaves used to publish the same scan again,
each in its own module fixture. ``published_once`` (``tests/conftest.py``)
runs the pipeline once, under a home of its own, on the session's dev server
and engine; each such module takes a copy of that home (:func:`copy_published`),
so what one module alters no other sees. A test that needs its own workflow
history or a live run still makes its own.

The copies share the tenant, so the documents' workflow IDs: a module that
starts a release from a copy gives it a recipient no other module uses (the
release ID derives from tenant, recipient, policy and documents).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import Client

from activities.engines.base import OcrEngine
from custody import egress as eg
from custody.ledger.signing import rotate
from custody.models import DocState
from custody.settings import Settings
from custody.state.egress import add_recipient
from custody.stores.local import LocalStore
from starter.client.release import release, wait_release
from starter.client.submit import submit, wait
from tests.activities.rules.drawn import DISCHARGE
from tests.activities.rules.drawn import png as drawn
from tests.helpers import make_settings, recipient, running_pipeline

#: The scan every copying module reads first; it is the tenant's first document.
SCAN = "tess_phototest.tif"
#: A second published scan (a FUNSD form), for what needs two documents.
OTHER = "funsd_86263525.png"
#: Signed into the first record's signer field, as a scanning station would.
SIGNER = {"station": "scanner-7"}
#: The outbox recipient ``release_once`` releases to: no other copying module uses it.
RECIPIENT = "clinic-b"


class InHome:
    """A test's handle on a home: the plain local store under its settings, on each use."""

    settings: Settings

    @property
    def store(self) -> LocalStore:
        return LocalStore(self.settings.objects_dir)


@dataclass(frozen=True)
class Published(InHome):
    """A home holding the session's published documents, all under one tenant.

    ``sha256`` (the phototest scan) was submitted first, so its four events open
    the tenant's ledger (sequence numbers 1 to 4); then ``other``, ``rejected``
    (a file of no supported type) and ``discharge`` (a drawn discharge summary,
    a configured document type, its fields read).
    """

    settings: Settings
    tenant: str
    sha256: str
    other: str
    rejected: str
    discharge: str


async def publish_once(
    client: Client, address: str, home: Path, engine: OcrEngine, corpus: Path
) -> Published:
    """The session's documents through the real pipeline, one after another, in order."""
    settings = make_settings(home, address)
    tenant = "shared-" + os.urandom(4).hex()
    junk = home / "not-a-document.bin"
    junk.write_bytes(b"\x00\x01 not any supported type " + os.urandom(16))
    async with running_pipeline(client, settings, engine) as custody:
        docs: list[tuple[Path | bytes, DocState, dict[str, Any]]] = [
            (corpus / "ocr_gt" / SCAN, DocState.PUBLISHED, {"signer": SIGNER}),
            (corpus / "ocr_gt" / OTHER, DocState.PUBLISHED, {}),
            (junk, DocState.REJECTED, {}),
            (drawn(DISCHARGE), DocState.PUBLISHED, {"document_type": "discharge"}),
        ]
        shas = []
        for source, expected, options in docs:
            sub = await submit(custody, source, tenant=tenant, **options)
            done = await wait(custody, sub.sha256, tenant=tenant)
            assert done.state is expected, (len(shas), done.state, done.code)
            shas.append(sub.sha256)
    return Published(settings, tenant, *shas)


def copy_published(origin: Published, home: Path, **overrides: Any) -> Published:
    """``origin``'s home copied whole into ``home``: objects, signing keys, every folder;
    fresh task queues, and ``overrides`` applied to the settings."""
    shutil.copytree(origin.settings.home, home, dirs_exist_ok=True)
    settings = make_settings(home, origin.settings.temporal_address, **overrides)
    return Published(
        settings, origin.tenant, origin.sha256, origin.other, origin.rejected, origin.discharge
    )


@dataclass(frozen=True)
class Released:
    """``published``'s home after one release of its phototest scan (``release_id``)."""

    published: Published
    release_id: str


async def release_once(
    client: Client, origin: Published, home: Path, engine: OcrEngine
) -> Released:
    """A copy of ``origin`` whose signing key is rotated, as a deployment would, and whose
    phototest scan is then released once to an outbox: its receipt is signed by a newer
    key than its record."""
    p = copy_published(origin, home, egress_delivery_attempts=2)
    rotate(p.settings.signing_path, development=True)
    async with running_pipeline(client, p.settings, engine, with_ocr_worker=False) as custody:
        add_recipient(custody.store, recipient(p.tenant, RECIPIENT, home / "outbox"))
        started = await release(custody, [p.sha256], to=RECIPIENT, tenant=p.tenant, actor="op")
        done = await asyncio.wait_for(wait_release(custody, started.release_id), 240)
    assert done.state is eg.ReleaseState.DELIVERED, done
    return Released(p, done.release_id)
