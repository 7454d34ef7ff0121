"""Workflow IDs and object-store keys, derived from the bytes' SHA-256.

The workflow ID is the dedupe key: the same bytes from the same tenant always
map to one workflow. The same bytes from two tenants are two documents, so the
tenant is part of the ID and of every key, and no answer for one tenant ever
depends on what another holds.
"""

from __future__ import annotations

import re

from custody.errors import Code, DocumentRejected

_SHA = re.compile(r"^[0-9a-f]{64}$")
# Identifiers that may appear in IDs and search attributes: never free text.
_TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_SOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
_NO_TENANT = "_"
#: Key scopes of system objects: a stored object's key-encryption key is named by its
#: key's second segment (custody.stores.sealed), so a tenant of one of these names
#: would share a KEK with ``keys/signing/``, ``egress/by-file/``, ``policies/fields/``,
#: ``pools/limits/``, ``admission/state/`` or ``ocr-config/pin/``, and shredding it
#: would destroy theirs. ``_system`` (the ledger's, custody.stores.system) and ``_``
#: (no tenant) cannot match a tenant's pattern; they are named for ``keys shred``.
RESERVED_SCOPES: frozenset[str] = frozenset(
    {"signing", "by-file", "fields", "limits", "state", "pin", "_system", _NO_TENANT}
)


def check_sha256(sha256: str) -> str:
    if not _SHA.match(sha256):
        raise DocumentRejected(Code.CORRUPT, "not a lower-case hex SHA-256")
    return sha256


def check_tenant(tenant: str | None) -> str | None:
    if tenant is not None and not _TENANT.match(tenant):
        raise DocumentRejected(Code.TENANT_INVALID, "tenant must match [a-z0-9][a-z0-9_-]{0,62}")
    if tenant in RESERVED_SCOPES:
        raise DocumentRejected(Code.TENANT_INVALID, "that name is a system scope, not a tenant's")
    return tenant


def check_source_id(source_id: str | None) -> str | None:
    if source_id is not None and not _SOURCE_ID.match(source_id):
        raise DocumentRejected(
            Code.TENANT_INVALID, "source id must be an identifier [A-Za-z0-9._:/-], not free text"
        )
    return source_id


def scope(tenant: str | None) -> str:
    return tenant if tenant else _NO_TENANT


def workflow_id(sha256: str, tenant: str | None = None) -> str:
    check_sha256(sha256)
    check_tenant(tenant)
    return f"doc-{tenant}-{sha256}" if tenant else f"doc-{sha256}"


def parse_workflow_id(wid: str) -> tuple[str, str | None]:
    """Inverse of :func:`workflow_id`: the SHA-256 is always the last 64 chars."""
    if not wid.startswith("doc-") or len(wid) < 68:
        raise ValueError("not a Custody workflow id")
    sha = wid[-64:]
    rest = wid[4:-64]
    return check_sha256(sha), (rest[:-1] if rest else None)


def intake_key(sha256: str, tenant: str | None) -> str:
    return f"intake/{scope(tenant)}/{sha256}"


def source_key(sha256: str, tenant: str | None) -> str:
    return f"sources/{scope(tenant)}/{sha256}"


def work_prefix(sha256: str, tenant: str | None) -> str:
    return f"work/{scope(tenant)}/{sha256}/"


def work_page_key(sha256: str, tenant: str | None, attempt_token: str, page: int) -> str:
    """Scratch OCR output of one attempt; a zombie attempt writes only its own keys."""
    return f"{work_prefix(sha256, tenant)}{attempt_token}/page-{page:04d}.json"


def work_pdf_key(sha256: str, tenant: str | None, attempt_token: str) -> str:
    """The searchable PDF one attempt built, until publish copies it beside the text."""
    return f"{work_prefix(sha256, tenant)}{attempt_token}/searchable.pdf"


def text_key(sha256: str, tenant: str | None, text_sha256: str) -> str:
    return f"results/{scope(tenant)}/{sha256}/text-{text_sha256[:16]}.txt"


def pages_key(sha256: str, tenant: str | None, text_sha256: str) -> str:
    return f"results/{scope(tenant)}/{sha256}/pages-{text_sha256[:16]}.json"


def pdf_key(sha256: str, tenant: str | None, text_sha256: str) -> str:
    """The searchable PDF: the page images with the text invisible over them."""
    return f"results/{scope(tenant)}/{sha256}/searchable-{text_sha256[:16]}.pdf"


def record_key(sha256: str, tenant: str | None) -> str:
    return f"records/{scope(tenant)}/{sha256}.json"


def outcome_prefix(sha256: str, tenant: str | None) -> str:
    return f"outcomes/{scope(tenant)}/{sha256}/"


def outcome_key(sha256: str, tenant: str | None, run_id: str) -> str:
    """One per run: a released quarantine runs again and concludes again."""
    return f"{outcome_prefix(sha256, tenant)}{run_id}.json"


def packet_key(sha256: str, tenant: str | None) -> str:
    return f"evidence/{scope(tenant)}/{sha256}/packet.json"
