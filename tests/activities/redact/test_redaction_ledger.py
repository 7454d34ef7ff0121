"""A kept redacted view is recorded in the tenant's ledger, and its signed record names the event.

The view is the ``viewed`` fixture's (conftest): a referral published by the
real pipeline, its view made by the real service.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from activities.redact.plan import normal
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.view import SignedView
from custody.canonical import canonical_json
from custody.ledger.events import Event, Ledger
from custody.models import EventRef
from custody.redactions import REDACTION_EVENT, view_key
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from tests.activities.redact.conftest import APPROVER, Viewed


def _events(store: ObjectStore, viewed: Viewed) -> list[Event]:
    found = Ledger(store, viewed.tenant).for_document(viewed.sha256)
    return [e for e in found if e.kind == REDACTION_EVENT]


def test_redaction_event_appended_when_a_view_is_kept(viewed: Viewed) -> None:
    """One ``redaction_created`` event names the view's hashes, policy, approver and box count."""
    [event] = _events(viewed.store, viewed)
    view = viewed.signed.view
    assert view.event == EventRef(seq=event.seq, hash=event.hash)
    assert event.sha256 == viewed.sha256 and event.actor == APPROVER
    key = view_key(viewed.sha256, viewed.tenant, DEFAULT_REDACTION.sha256())
    assert event.detail == {
        "view_key": key,
        "view_sha256": view.pdf_sha256,
        "text_sha256": view.text_sha256,
        "record_sha256": view.record_sha256,
        "policy": DEFAULT_REDACTION.name,
        "policy_sha256": DEFAULT_REDACTION.sha256(),
        "box_count": len(view.entries),
    }
    body = normal(canonical_json(event).decode())
    for name in ("participant_id", "clinician"):
        assert normal(str(viewed.truth[name])) not in body  # hashes and counts, no text


def test_redaction_event_not_appended_twice(viewed: Viewed, tmp_path: Path) -> None:
    """Asking again, or retrying after the event but before the view's record, adds no event."""
    shutil.copytree(viewed.settings.objects_dir, tmp_path / "objects")
    copy = LocalStore(tmp_path / "objects")
    again = viewed.redactor(copy).redact(viewed.sha256, viewed.tenant, DEFAULT_REDACTION, "x")
    assert again == viewed.signed and len(_events(copy, viewed)) == 1
    key = view_key(viewed.sha256, viewed.tenant, DEFAULT_REDACTION.sha256())
    copy.delete(key)  # as if the attempt died after appending, before the record was written
    retried = viewed.redactor(copy).redact(
        viewed.sha256, viewed.tenant, DEFAULT_REDACTION, APPROVER
    )
    assert len(_events(copy, viewed)) == 1
    assert retried.view.event == viewed.signed.view.event
    assert SignedView.model_validate_json(copy.get(key)) == retried
