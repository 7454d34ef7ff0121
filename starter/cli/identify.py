"""``custody egress identify FILE``: which of the asking tenant's releases a found file came from.

Four readings, strongest first; the first that names a release answers:

1. **hash**: the file's SHA-256 is one a release of this tenant carried
   (``egress/<tenant>/by-file/``): ``exact`` for a released PDF or page image,
   whose marks make its bytes its release's own. A text file is ``text``: its
   bytes are the document's published text, the same in every release of it
   (and in a read of it), so they name no release; the answer lists the
   releases that carried them instead.
2. **c2pa**: a C2PA manifest signed by this deployment's chain names a release;
   the bytes are not a released file's, so the file was changed: ``altered``.
3. **watermark**, machine-readable: the PDF's XMP names a release (``/ID``
   and XMP survive many edits that drop the manifest): ``altered``.
4. **watermark**, visible: the release id and its check code printed on page 1,
   read back with OCR (a print-and-scan copy): ``altered``.

Every reading is scoped to the tenant asking (``--tenant``; none: the no-tenant
scope): another tenant's release is ``none``, exactly like no release, so the
command is no oracle on what others sent. Unsigned readings (3, 4) count only
when this tenant's scope holds that release. Readings 2-4 decode the file only
in the locked-down inspection child; a file it refuses (a decompression bomb, a
decoder crash) raises ``DocumentRejected`` with its code.
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
from custody.ledger.events import Ledger
from custody.state.egress import SignedReceipt
from custody.stores import ObjectMissing, ObjectStore

Match = Literal["exact", "altered", "text", "none"]
By = Literal["hash", "c2pa", "watermark"]
#: What a released file is, by its media type.
_KINDS = {"application/pdf": "searchable_pdf", "image/png": "page_image", "text/plain": "text"}


@dataclass(frozen=True)
class Identified:
    release_id: str | None
    recipient: str | None
    match: Match
    by: By | None
    scope: str | None = None
    #: Which reading answered when ``by`` is ``watermark``: ``xmp`` or ``visible``.
    via: str | None = None
    #: A hash match's file: ``searchable_pdf``, ``page_image`` or ``text``.
    file: str | None = None
    #: ``text``: this tenant's releases that carried those exact bytes.
    releases: tuple[str, ...] = ()

    def json(self) -> dict[str, Any]:
        return {
            "release_id": self.release_id,
            "recipient": self.recipient,
            "match": self.match,
            "by": self.by,
            "scope": self.scope,
            "via": self.via,
            "file": self.file,
            "releases": list(self.releases),
        }


NONE = Identified(release_id=None, recipient=None, match="none", by=None)


def identify(
    store: ObjectStore, data: bytes, trust_anchor_pem: bytes | None, tenant: str | None = None
) -> Identified:
    """The release of ``tenant`` that ``data`` came from, and whether it is what left."""
    exact = _by_hash(store, data, tenant)
    if exact is not None:
        return exact
    for via, rid, vouched in _readings(store, data, trust_anchor_pem, tenant):
        if vouched is not None:
            return vouched  # signed by this deployment's CA: it names its release itself
        if _holds(store, tenant, rid):
            by: By = "c2pa" if via == "c2pa" else "watermark"
            recipient = recipient_of(store, tenant, rid)
            return Identified(rid, recipient, "altered", by, ids.scope(tenant), via)
    return NONE


def _by_hash(store: ObjectStore, data: bytes, tenant: str | None) -> Identified | None:
    sha = hashlib.sha256(data).hexdigest()
    entries = [json.loads(store.get(key)) for key in store.list(eg.by_file_prefix(tenant, sha))]
    entries += _legacy_entry(store, sha, tenant)
    if not entries:
        return None
    kinds = [_kind(entry) for entry in entries]
    if "text" in kinds:  # the document's text: the same bytes in each release of it
        rids = tuple(sorted({str(entry["release_id"]) for entry in entries}))
        return Identified(None, None, "text", "hash", ids.scope(tenant), file="text", releases=rids)
    rid = str(entries[0]["release_id"])
    recipient = recipient_of(store, tenant, rid)
    return Identified(rid, recipient, "exact", "hash", ids.scope(tenant), file=kinds[0])


def _legacy_entry(store: ObjectStore, sha: str, tenant: str | None) -> list[dict[str, Any]]:
    """The index from before it was per tenant, when its one entry is this tenant's."""
    try:
        body = json.loads(store.get(eg.by_file_key(sha)))
    except (ObjectMissing, KeyError):
        return []
    return [body] if isinstance(body, dict) and body.get("tenant") == tenant else []


def _kind(entry: dict[str, Any]) -> str:
    media = entry.get("media_type")
    if isinstance(media, str) and media in _KINDS:
        return _KINDS[media]
    name = str(entry.get("name", ""))  # legacy entries name the file only
    return (
        "text"
        if name.endswith(".txt")
        else "page_image"
        if name.endswith(".png")
        else "searchable_pdf"
    )


def _readings(
    store: ObjectStore, data: bytes, anchor: bytes | None, tenant: str | None
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
        ours = claim.trusted and claim.tenant == tenant  # another tenant's: as if unsigned
        yield "c2pa", claim.release_id, found if ours else None
    if marks.xmp is not None:
        yield "xmp", marks.xmp, None
    known = _known(store, tenant)
    printed = None if page is None else read_mark_on_page(Image.fromarray(page), known)
    if printed is not None:
        yield "visible", printed, None


def _known(store: ObjectStore, tenant: str | None) -> set[str]:
    """The tenant's release ids: what a printed id is matched to."""
    prefix = eg.releases_prefix(tenant)
    return {key[len(prefix) :].partition("/")[0] for key in store.list(prefix)}


def _holds(store: ObjectStore, tenant: str | None, rid: str) -> bool:
    """Whether the tenant's scope holds release ``rid``."""
    try:
        eg.check_release_id(rid)
    except ValueError:
        return False
    return any(True for _ in store.list(f"{eg.releases_prefix(tenant)}{rid}/"))


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
