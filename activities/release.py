"""The release workflow's activities: prepare, render, record, deliver, receipt, close.

Each is idempotent on its own, because any of them may run again after a
worker dies at any point:

- **prepare** reads only; it refuses (a coded, non-retryable failure) anything
  that is not a published document of this tenant whose source still hashes
  to its signed record, and any unknown or revoked recipient or policy; under
  a policy that requires consent, any referral without it.
- **render** creates each file once (``egress/<tenant>/releases/<id>/files/``)
  and a retry re-reads what the first attempt stored, so the hashes that go
  on are those of the bytes that exist, whatever the renderer would make now.
- **record** appends the egress event once (``append_once``) before any
  byte leaves; **deliver** hands the stored files to the recipient's channel,
  which never keeps a second copy; **receipt** signs what was delivered and
  appends it once; **close** appends ``egress.failed`` once when delivery
  gave up.

Each takes its step's input (``custody.release_steps``), or the nested shape
a release started before those models still sends (``custody.release_steps_v1``),
and returns only what its step adds, with the attempt that made it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from temporalio import activity

from activities.egress import channels as ch
from activities.egress.delivery import open_channel
from activities.faults import coded
from activities.rules.consent import require_consent
from activities.scratch import StagingArea, stored_sha256
from custody import egress as eg
from custody import ids
from custody import release_steps as steps
from custody import release_steps_v1 as v1
from custody.errors import Code, DeliveryFailed, EgressRefused
from custody.ledger.signing import Signer
from custody.models import SignedRecord
from custody.release_approval import flagged, needs_approval
from custody.settings import Settings
from custody.state.egress import (
    SignedReceipt,
    append_once,
    get_recipient,
    pinned_policy,
    record_egress,
    sha256_bytes,
)
from custody.stores import ObjectStore

if TYPE_CHECKING:
    from activities.egress import build


class ReleaseActivities:
    def __init__(
        self,
        store: ObjectStore,
        area: StagingArea,
        signer: Signer,
        settings: Settings,
    ) -> None:
        self._store = store
        self._area = area
        self._signer = signer
        self._settings = settings

    @activity.defn(name="custody.release.prepare")
    @coded(Code.INTERNAL)
    def prepare(self, inp: steps.PrepareInput | eg.ReleaseInput) -> steps.Prepared:
        if isinstance(inp, eg.ReleaseInput):  # v1: the release's whole input
            inp = steps.Inputs(inp).prepare()
        policy = pinned_policy(self._store, inp.tenant, inp.policy_sha256)
        if policy.applies_to is not eg.EgressKind.RELEASE:
            raise EgressRefused(Code.POLICY_INVALID, f"policy {policy.name} is not for releases")
        recipient = get_recipient(self._store, inp.tenant, inp.recipient)
        self._reachable(recipient)
        if not inp.documents:
            raise EgressRefused(Code.RELEASE_INVALID, "a release needs at least one document")
        found = [self._published(inp.tenant, sha, policy) for sha in sorted(set(inp.documents))]
        return steps.Prepared(
            policy=policy,
            recipient=recipient,
            sources=[source for source, _ in found],
            needs_approval=needs_approval(policy, any(flag for _, flag in found)),
            attempt=activity.info().attempt,
        )

    def _reachable(self, recipient: eg.Recipient) -> None:
        """Refuse, before anything is rendered, a recipient this deployment may not reach."""
        from activities.egress.reach import Reach
        from activities.egress.s3_access import required

        Reach.of(self._settings).check(
            ch.RecipientChannel.of(recipient.kind.value, recipient.target)
        )
        if recipient.kind is eg.ChannelKind.S3:
            required(recipient.credentials, self._settings)

    def _published(
        self, tenant: str | None, sha256: str, policy: eg.Policy
    ) -> tuple[eg.SourceDoc, bool]:
        """A published document of this tenant whose source still hashes to its record, and
        whether a rule flagged it (the two-person rule's ``flagged``)."""
        key = ids.record_key(ids.check_sha256(sha256), tenant)
        if not self._store.exists(key):
            known = any(True for _ in self._store.list(ids.outcome_prefix(sha256, tenant)))
            code = Code.NOT_PUBLISHED if known else Code.DOCUMENT_UNKNOWN
            raise EgressRefused(code, f"document {sha256[:12]} is not published here")
        record = SignedRecord.model_validate_json(self._store.get(key)).record
        if record.sha256 != sha256 or record.tenant != tenant:
            raise EgressRefused(Code.SOURCE_ALTERED, f"record of {sha256[:12]} names another")
        if stored_sha256(self._store, record.source_key) != sha256:
            raise EgressRefused(Code.SOURCE_ALTERED, f"source of {sha256[:12]} no longer hashes")
        if policy.require_consent:
            require_consent(self._store, record)
        return eg.SourceDoc.of(record), flagged(record.fields_review, record.confidence_band)

    @activity.defn(name="custody.release.render")
    @coded(Code.RENDER_FAILED)
    def render(self, inp: steps.RenderInput | v1.Prepared) -> steps.Rendered:
        job = inp.upgraded() if isinstance(inp, v1.Prepared) else inp
        files: list[eg.FileRef] = []
        manifests: dict[str, str] = {}
        for src in job.sources:
            for name, media_type, build in self._builders(job, src):
                activity.heartbeat(name)
                key = eg.release_file_key(job.tenant, job.release_id, name)
                if not self._store.exists(key):
                    self._store.create(key, build())
                data = self._store.get(key)  # what exists is what goes on
                ref = eg.FileRef(
                    name=name, sha256=sha256_bytes(data), bytes=len(data), media_type=media_type
                )
                self._index(ref, job)
                files.append(ref)
                if job.policy.c2pa and media_type != "text/plain":
                    manifests[name] = self._manifest(data, media_type)
        # The listing whose hash is the packet's: ``egress ls`` names each file from it.
        self._store.create(
            eg.release_packet_key(job.tenant, job.release_id), eg.packet_listing(files)
        )
        return steps.Rendered(
            files=files,
            packet_sha256=eg.packet_sha256(files),
            manifest_sha256s=manifests,
            attempt=activity.info().attempt,
        )

    def _builders(self, p: steps.RenderInput, src: eg.SourceDoc) -> Iterator[build.Builder]:
        from activities.egress import build  # rendering libraries load only where used

        job = build.Job(
            release=p,
            source=src,
            area=self._area,
            store=self._store,
            dpi=self._settings.limits.ocr_dpi,
            c2pa_dir=self._c2pa_dir,
            production=self._settings.env == "production",
            limits=self._settings.limits,
        )
        if p.policy.view != "redacted":
            return build.files(job)
        from activities.redact.release import redacted_files  # the checked, signed view

        return redacted_files(p, src, (self._store, self._signer, self._area, self._settings), job)

    def _manifest(self, data: bytes, media_type: str) -> str:
        from activities.egress import build

        return build.manifest_sha256(
            data, media_type, self._c2pa_dir, self._settings.env == "production"
        )

    @property
    def _c2pa_dir(self) -> Path:
        return self._settings.signing_path / "c2pa"

    def _index(self, ref: eg.FileRef, p: steps.RenderInput) -> None:
        """This release carried these bytes: found again by ``egress identify``, per tenant
        (a text file's bytes are the same in every release of its document)."""
        body = {"release_id": p.release_id, "tenant": p.tenant, "name": ref.name}
        body["media_type"] = ref.media_type
        key = f"{eg.by_file_prefix(p.tenant, ref.sha256)}{p.release_id}.json"
        self._store.create(key, json.dumps(body, sort_keys=True).encode())

    @activity.defn(name="custody.release.record")
    @coded(Code.STORE_UNAVAILABLE)
    def record(self, inp: steps.RecordInput | v1.Rendered) -> steps.Recorded:
        r = inp.upgraded() if isinstance(inp, v1.Rendered) else inp
        info = activity.info()
        event = record_egress(
            self._store,
            r.tenant,
            eg.EgressKind.RELEASE,
            actor=r.actor,
            policy=r.policy,
            documents=r.documents,
            bytes_sha256=r.packet_sha256,
            size=r.size,
            release_id=r.release_id,
            recipient=r.recipient,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            once=eg.release_event_key(r.tenant, r.release_id),
            purpose=r.purpose or r.policy.purpose,
        )
        return steps.Recorded(event_seq=event.seq, event_hash=event.hash, attempt=info.attempt)

    @activity.defn(name="custody.release.deliver")
    @coded(Code.RECIPIENT_UNREACHABLE)
    def deliver(self, inp: steps.DeliverInput | v1.Recorded) -> eg.Delivered:
        d = inp.upgraded() if isinstance(inp, v1.Recorded) else inp
        from activities.egress.reach import Reach  # its rules are checked again here

        s = self._settings
        packet = ch.Packet(release_id=d.release_id, files=self._packet_files(d))
        channel = open_channel(
            ch.RecipientChannel.of(d.channel.value, d.target),
            s3=self._s3(d.credentials) if d.channel is eg.ChannelKind.S3 else None,
            ca_file=str(s.egress_ca_file) if s.egress_ca_file else None,
            limits=ch.AttemptLimits(deadline_s=s.egress_push_deadline_s),
            reach=Reach.of(s),
        )
        # A channel's DeliveryFailed passes through: ``coded`` turns its code into the
        # failure type, non-retryable exactly when the code is final.
        got = channel.deliver(packet)
        delivered = eg.Delivered(
            channel=eg.ChannelKind(got.channel),
            location=got.location,
            answer_sha256=got.answer_sha256,
            status=got.status,
            already_delivered=got.already_delivered,
            attempts=activity.info().attempt,  # one try per attempt
            at=datetime.now(UTC),
        )
        # The operator's record keeps what the recipient answered; the tenant's view
        # (history, result, receipt) only what was sent: no port or TLS oracle.
        key = eg.release_delivery_key(d.tenant, d.release_id)
        self._store.put(key, delivered.model_dump_json().encode())
        if got.body_sha256 is None:
            return delivered
        return delivered.model_copy(update={"status": None, "answer_sha256": got.body_sha256})

    def _packet_files(self, d: steps.DeliverInput) -> tuple[ch.PacketFile, ...]:
        """The stored files, each still hashing to what render recorded."""
        files = []
        for ref in d.files:
            data = self._store.get(eg.release_file_key(d.tenant, d.release_id, ref.name))
            if sha256_bytes(data) != ref.sha256:
                raise DeliveryFailed(Code.SOURCE_ALTERED, f"{ref.name} changed")
            files.append(ch.PacketFile(name=ref.name, data=data))
        return tuple(files)

    def _s3(self, credentials: str | None) -> ch.S3Access:
        from activities.egress.s3_access import recipient_access

        return recipient_access(credentials, self._settings)

    @activity.defn(name="custody.release.receipt")
    @coded(Code.STORE_UNAVAILABLE)
    def receipt(self, inp: steps.ReceiptInput | v1.ReceiptInput) -> steps.ReceiptRef:
        r = inp.upgraded() if isinstance(inp, v1.ReceiptInput) else inp
        info = activity.info()
        key = eg.receipt_key(r.tenant, r.release_id)
        if not self._store.exists(key):
            self._signer.publish(self._store)
            receipt = r.receipt(
                info.workflow_id or "", info.workflow_run_id or "", datetime.now(UTC)
            )
            signed = SignedReceipt.sign(receipt, self._signer)
            self._store.create(key, signed.canonical())
        body = self._store.get(key)
        event = append_once(
            self._store,
            r.tenant,
            eg.RECEIPT_EVENT,
            once=f"{key}.event",
            actor=r.actor,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            detail={"release_id": r.release_id, "receipt_sha256": sha256_bytes(body)},
        )
        return steps.ReceiptRef(
            key=key, sha256=sha256_bytes(body), event_seq=event.seq, attempt=info.attempt
        )

    @activity.defn(name="custody.release.close")
    @coded(Code.STORE_UNAVAILABLE)
    def close(self, inp: steps.CloseInput | v1.CloseInput) -> steps.Closed:
        c = inp.upgraded() if isinstance(inp, v1.CloseInput) else inp
        info = activity.info()
        event = append_once(
            self._store,
            c.tenant,
            eg.FAILED_EVENT,
            once=f"{eg.release_delivery_key(c.tenant, c.release_id)}.failed",
            actor=c.actor,
            code=c.code,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            detail={"release_id": c.release_id, "egress_event_seq": c.event_seq},
        )
        return steps.Closed(failed_seq=event.seq, attempt=info.attempt)
