"""Validate: decide whether a document may spend OCR, before any is spent.

The decoding of untrusted bytes happens in a child process with time and
memory bounds (``activities.inspect.untrusted``), so a hostile file costs one attempt,
never a worker. A broken rule is a ``DocumentRejected`` with a stable code and is
never retried; the policy version in force is returned for the record.

The ledger pins the evidence packet by the hash of the bytes read back from the
store after the write, not of the body meant: a store that alters bytes on the
way in is ``SEAL_INVALID`` here, at write time, rather than a ``packet.hash``
FAIL found by ``custody verify`` years later.
"""

from __future__ import annotations

import hashlib

from temporalio import activity

from activities.audit import record, ref
from activities.faults import coded
from activities.inspect.untrusted import inspect_untrusted, prewarm
from activities.scratch import StagingArea
from custody import ids
from custody.canonical import canonical_json, is_canonical
from custody.errors import Code, SealInvalid
from custody.models import EventRef, EvidencePacket, ValidateInput, ValidationResult
from custody.refs import RefKeys
from custody.settings import Limits
from custody.stores import ObjectStore


class ValidationActivities:
    def __init__(self, store: ObjectStore, area: StagingArea, limits: Limits) -> None:
        self._store = store
        self._area = area
        self._limits = limits
        self._refs = RefKeys.for_store(store)
        self._policy_version = limits.policy_version()
        prewarm()

    @activity.defn(name="custody.validate")
    @coded(Code.INTERNAL)
    def validate(self, inp: ValidateInput) -> ValidationResult:
        source = self._refs.check(inp.source_key, inp.tenant, inp.sha256, inp.source_sig)
        with self._area.staged(self._store, source, inp.sha256) as path:
            found = inspect_untrusted(path, self._limits)
        packet = self._record_packet(inp, found.media_type, found.pages)
        return ValidationResult(
            media_type=found.media_type,
            pages=found.pages,
            policy_version=self._policy_version,
            packet_event=packet,
            attempt=activity.info().attempt,
        )

    def _record_packet(self, inp: ValidateInput, media_type: str, pages: int) -> EventRef:
        """The evidence packet: what is known before OCR is dispatched, hashed into the ledger."""
        info = activity.info()
        packet = EvidencePacket(
            sha256=inp.sha256,
            size_bytes=inp.size_bytes,
            media_type=media_type,
            pages=pages,
            source_id=inp.source_id,
            tenant=inp.tenant,
            captured_at=inp.captured_at,
            signer=inp.signer,
            policy_version=self._policy_version,
            workflow_id=info.workflow_id or "",
            run_id=info.workflow_run_id or "",
        )
        stored = self._store_packet(ids.packet_key(inp.sha256, inp.tenant), packet)
        event = record(
            self._store,
            inp.tenant,
            "validated",
            inp.sha256,
            media_type=media_type,
            pages=pages,
            policy_version=self._policy_version,
            packet_sha256=hashlib.sha256(stored).hexdigest(),
        )
        return ref(event)

    def _store_packet(self, key: str, packet: EvidencePacket) -> bytes:
        """Create the packet once; its bytes as read back, which the ledger then pins.

        A packet already there (an earlier run of the same document wrote it)
        stands if it is canonical and this document's; bytes that differ from
        those just created, or a stranger's packet, are ``SEAL_INVALID``.
        """
        body = canonical_json(packet)
        created = self._store.create(key, body)
        stored = self._store.get(key)
        if stored == body or (not created and _same_subject(stored, packet)):
            return stored
        why = "altered on write" if created else "not this document's"
        digest = hashlib.sha256(stored).hexdigest()[:16]
        raise SealInvalid(detail=f"evidence packet sha256 {digest} {why}")


def _same_subject(stored: bytes, packet: EvidencePacket) -> bool:
    """Whether ``stored`` is a canonical packet of the same document (as ``packet.subject``)."""
    try:
        found = EvidencePacket.model_validate_json(stored)
    except ValueError:
        return False
    subject = (packet.sha256, packet.tenant, packet.size_bytes, packet.media_type)
    same = (found.sha256, found.tenant, found.size_bytes, found.media_type) == subject
    return same and is_canonical(stored)
