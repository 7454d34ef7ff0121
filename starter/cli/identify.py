"""``custody egress identify FILE``: which release a file found anywhere came from.

Four readings, strongest first; the first that names a release answers:

1. **hash**: the file's SHA-256 is a released file's (``egress/by-file/``): ``exact``.
2. **c2pa**: a C2PA manifest signed by this deployment's chain names a release;
   the bytes are not a released file's, so the file was changed: ``altered``.
3. **watermark**, machine-readable: the PDF's XMP names a release (``/ID``
   and XMP survive many edits that drop the manifest): ``altered``.
4. **watermark**, visible: the release id and its check code printed on page 1,
   read back with OCR (a print-and-scan copy): ``altered``.

Unsigned readings (3, 4) count only when the store holds that release, in
some tenant's scope. This is an operator's command across tenants; the answer
names the tenant only by its scope, never a document's content. Readings 2-4
decode the file only in the locked-down inspection child; a file it refuses
(a decompression bomb, a decoder crash) raises ``DocumentRejected`` with its code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from PIL import Image

from custody import egress as eg
from custody import ids
from custody.ledger.events import Ledger, scopes
from custody.state.egress import SignedReceipt
from custody.stores import ObjectMissing, ObjectStore

Match = Literal["exact", "altered", "none"]
By = Literal["hash", "c2pa", "watermark"]


@dataclass(frozen=True)
class Identified:
    release_id: str | None
    recipient: str | None
    match: Match
    by: By | None
    scope: str | None = None
    #: Which reading answered when ``by`` is ``watermark``: ``xmp`` or ``visible``.
    via: str | None = None

    def json(self) -> dict[str, Any]:
        return {
            "release_id": self.release_id,
            "recipient": self.recipient,
            "match": self.match,
            "by": self.by,
            "scope": self.scope,
            "via": self.via,
        }


NONE = Identified(release_id=None, recipient=None, match="none", by=None)


def identify(store: ObjectStore, data: bytes, trust_anchor_pem: bytes | None) -> Identified:
    """The release ``data`` came from, and whether it is byte-identical to what left."""
    exact = _by_hash(store, data)
    if exact is not None:
        return exact
    for via, rid, vouched in _readings(store, data, trust_anchor_pem):
        if vouched is not None:
            return vouched  # signed by this deployment's CA: it names its release itself
        for tenant in _holders(store, rid)[:1]:
            by: By = "c2pa" if via == "c2pa" else "watermark"
            recipient = recipient_of(store, tenant, rid)
            return Identified(rid, recipient, "altered", by, ids.scope(tenant), via)
    return NONE


def _by_hash(store: ObjectStore, data: bytes) -> Identified | None:
    try:
        body = json.loads(store.get(eg.by_file_key(hashlib.sha256(data).hexdigest())))
    except (ObjectMissing, KeyError):
        return None
    rid, tenant = str(body["release_id"]), body.get("tenant")
    recipient = recipient_of(store, tenant, rid)
    return Identified(rid, recipient, "exact", "hash", ids.scope(tenant))


def _readings(
    store: ObjectStore, data: bytes, anchor: bytes | None
) -> Iterator[tuple[str, str, Identified | None]]:
    """(via, release id, answer if signed by us): C2PA, then XMP, then the printed mark.

    The file is decoded only in the locked-down inspection child
    (``activities.inspect.identify``), which hands back what the manifest and
    XMP name and page 1's pixels; Tesseract reads those here. A generator, so
    the slow OCR of the printed mark runs only when nothing before it named a
    release the store holds. A manifest not signed by this deployment's CA (a
    forgery, or another deployment's) only names a release, like XMP does.
    """
    from activities.egress.readback import read_mark_on_page
    from activities.inspect.identify import read_marks

    marks, page = read_marks(data, anchor)  # a file it cannot read: DocumentRejected, coded
    if marks.c2pa is not None:
        claim = marks.c2pa
        scope = ids.scope(claim.tenant)
        found = Identified(claim.release_id, claim.recipient, "altered", "c2pa", scope, "c2pa")
        yield "c2pa", claim.release_id, found if claim.trusted else None
    if marks.xmp is not None:
        yield "xmp", marks.xmp, None
    printed = None if page is None else read_mark_on_page(Image.fromarray(page), _known(store))
    if printed is not None:
        yield "visible", printed, None


def _known(store: ObjectStore) -> set[str]:
    """Every release id the store holds, in any tenant: what a printed id is matched to."""
    found: set[str] = set()
    for tenant in scopes(store):
        prefix = eg.releases_prefix(tenant)
        found.update(key[len(prefix) :].partition("/")[0] for key in store.list(prefix))
    return found


def _holders(store: ObjectStore, rid: str) -> list[str | None]:
    """The tenants (None: no tenant) whose scope holds release ``rid``: one, or none."""
    try:
        eg.check_release_id(rid)
    except ValueError:
        return []
    return [
        tenant
        for tenant in scopes(store)
        if any(True for _ in store.list(f"{eg.releases_prefix(tenant)}{rid}/"))
    ]


def recipient_of(store: ObjectStore, tenant: str | None, rid: str) -> str | None:
    """The recipient, from the signed receipt, else from the release's egress event."""
    try:
        signed = SignedReceipt.model_validate_json(store.get(eg.receipt_key(tenant, rid)))
        return signed.receipt.recipient
    except (ObjectMissing, KeyError, ValueError):
        pass
    prefix = f"{eg.release_event_key(tenant, rid)}/seq/"
    ledger = Ledger(store, tenant)
    for marker in store.list(prefix):
        event = ledger.find(int(marker[len(prefix) :]))
        if event is not None and event.kind == eg.EGRESS_EVENT:
            recipient = event.detail.get("recipient")
            return None if recipient is None else str(recipient)
    return None
