"""On a versioned S3 bucket: a document's evidence objects each have one version, none hidden.

Custody creates evidence objects once (conditional create) and never rewrites
them, so on a bucket with versioning every such key has exactly one version.
A second version means the object was overwritten (and what ``get`` returns
may be a later or a rolled-back copy); a delete marker means it was deleted
and only hides behind the marker. Verification reads only current versions,
so ``store.versions`` lists the history and names each key that has either.

Only S3 keeps versions: for any other store, or a bucket without versioning,
there is no such check (``None``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from custody import ids
from custody.ledger.events import event_key
from custody.ledger.events import prefix as log_prefix
from custody.ledger.signing import PUBLIC_PREFIX
from custody.ledger.tiles import WIDTH, bundle_key
from custody.stores import ObjectStore
from starter.evidence.verify.report import Check, checked


def _s3(store: ObjectStore) -> Any | None:
    """The S3 store under the sealing and retrying wrappers, if that is what this is."""
    seen: object = store
    for _ in range(8):
        if all(hasattr(seen, a) for a in ("client", "bucket", "prefix")):
            return seen
        seen = getattr(seen, "inner", None)
        if seen is None:
            return None
    return None


def _document_prefixes(sha256: str, tenant: str | None, seqs: list[int]) -> list[str]:
    scope = ids.scope(tenant)
    return [
        ids.record_key(sha256, tenant),
        ids.packet_key(sha256, tenant),
        ids.source_key(sha256, tenant),
        f"results/{scope}/{sha256}/",
        ids.outcome_prefix(sha256, tenant),
        f"ledger/{scope}/by-doc/{sha256}/",
        *(event_key(tenant, seq) for seq in seqs),
        # The full entry bundles holding its events (right-edge partials are superseded).
        *sorted({bundle_key(log_prefix(tenant), (seq - 1) // WIDTH) for seq in seqs}),
        PUBLIC_PREFIX,
    ]


def versions_check(
    store: ObjectStore, sha256: str, tenant: str | None, seqs: list[int]
) -> Check | None:
    s3 = _s3(store)
    if s3 is None or not _versioned(s3):
        return None
    problems: list[str] = []
    for prefix in _document_prefixes(sha256, tenant, seqs):
        problems += _history_problems(s3, prefix)
    return checked("store.versions", problems, "one version of each object")


#: What of a tenant's log must never change: full tiles and bundles, batches, index entries,
#: events from before tiles (the checkpoint, the size hint and partial tiles do, by design).
_LEDGER_PARTS = ("tile/", "batch/", "by-doc/", "events/")


def ledger_versions_check(store: ObjectStore, tenant: str | None) -> Check | None:
    """``ledger.versions``: on a versioned bucket, nothing of the log that is created once
    has a second version (overwritten) or hides behind a delete marker; None elsewhere."""
    s3 = _s3(store)
    if s3 is None or not _versioned(s3):
        return None
    problems: list[str] = []
    for part in _LEDGER_PARTS:
        found = _history_problems(s3, f"{log_prefix(tenant)}{part}")
        problems += [p for p in found if ".p/" not in p]  # partial tiles: superseded by design
    return checked("ledger.versions", problems, "one version of each object")


def _versioned(s3: Any) -> bool:
    status = s3.client.get_bucket_versioning(Bucket=s3.bucket).get("Status")
    return status in ("Enabled", "Suspended")  # suspended keeps the versions made before


def _history_problems(s3: Any, prefix: str) -> list[str]:
    versions: Counter[str] = Counter()
    hidden: set[str] = set()
    pages = s3.client.get_paginator("list_object_versions").paginate(
        Bucket=s3.bucket, Prefix=s3.prefix + prefix
    )
    for page in pages:
        for v in page.get("Versions", []):
            versions[str(v["Key"])[len(s3.prefix) :]] += 1
        for m in page.get("DeleteMarkers", []):
            if m.get("IsLatest"):
                hidden.add(str(m["Key"])[len(s3.prefix) :])
    if "/tile/" in prefix:  # a bundle's key, exactly: its partials are replaced by design
        versions = Counter({k: n for k, n in versions.items() if k == prefix})
        hidden &= {prefix}
    problems = [f"{key} deleted (hidden by a delete marker)" for key in sorted(hidden)]
    problems += [
        f"{key} has {n} versions (superseded)"
        for key, n in sorted(versions.items())
        if n > 1 and key not in hidden
    ]
    return problems
