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
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from temporalio import activity

from activities.egress import channels as ch
from activities.egress.delivery import open_channel
from activities.faults import coded
from activities.rules.consent import require_consent
from activities.scratch import StagingArea, stored_sha256
from custody import egress as eg
from custody import ids
from custody.errors import Code, DeliveryFailed, EgressRefused
from custody.ledger.signing import Signer
from custody.models import SignedRecord
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
    def prepare(self, inp: eg.ReleaseInput) -> eg.Prepared:
        policy = pinned_policy(self._store, inp.tenant, inp.policy_sha256)
        if policy.applies_to is not eg.EgressKind.RELEASE:
            raise EgressRefused(Code.POLICY_INVALID, f"policy {policy.name} is not for releases")
        recipient = get_recipient(self._store, inp.tenant, inp.recipient)
        if not inp.documents:
            raise EgressRefused(Code.RELEASE_INVALID, "a release needs at least one document")
        sources = [self._published(inp.tenant, sha, policy) for sha in sorted(set(inp.documents))]
        return eg.Prepared(release=inp, policy=policy, recipient=recipient, sources=sources)

    def _published(self, tenant: str | None, sha256: str, policy: eg.Policy) -> eg.SourceDoc:
        """A published document of this tenant whose source still hashes to its record."""
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
        return eg.SourceDoc(
            sha256=sha256,
            source_key=record.source_key,
            media_type=record.media_type,
            pages=record.pages,
            pages_key=record.pages_key,
            text_key=record.text_key,
        )

    @activity.defn(name="custody.release.render")
    @coded(Code.RENDER_FAILED)
    def render(self, p: eg.Prepared) -> eg.Rendered:
        files: list[eg.FileRef] = []
        manifests: dict[str, str] = {}
        rid, tenant = p.release.release_id, p.release.tenant
        for src in p.sources:
            for name, media_type, build in self._builders(p, src):
                activity.heartbeat(name)
                key = eg.release_file_key(tenant, rid, name)
                if not self._store.exists(key):
                    self._store.create(key, build())
                data = self._store.get(key)  # what exists is what goes on
                ref = eg.FileRef(
                    name=name, sha256=sha256_bytes(data), bytes=len(data), media_type=media_type
                )
                self._index(ref, p)
                files.append(ref)
                if p.policy.c2pa and media_type != "text/plain":
                    manifests[name] = self._manifest(data, media_type)
        return eg.Rendered(
            prepared=p,
            files=files,
            packet_sha256=eg.packet_sha256(files),
            manifest_sha256s=manifests,
        )

    def _builders(
        self, p: eg.Prepared, src: eg.SourceDoc
    ) -> Iterator[tuple[str, str, Callable[[], bytes]]]:
        from activities.egress import build  # rendering libraries load only where used

        stem = f"document-{src.sha256[:16]}"
        job = build.Job(
            prepared=p,
            source=src,
            area=self._area,
            store=self._store,
            dpi=self._settings.limits.ocr_dpi,
            c2pa_dir=self._c2pa_dir,
            production=self._settings.env == "production",
        )
        if p.policy.view == "redacted":  # the checked, signed view instead of the pages
            from activities.redact.release import redacted_files

            parts = (self._store, self._signer, self._area, self._settings)
            yield from redacted_files(p, src, parts, job)
            return
        if "searchable_pdf" in p.policy.include:
            yield f"{stem}.pdf", "application/pdf", job.pdf
        if "page_images" in p.policy.include:
            for page in range(src.pages):
                yield f"{stem}-p{page + 1:03d}.png", "image/png", job.png(page)
        if "text" in p.policy.include:
            yield f"{stem}.txt", "text/plain", lambda: self._store.get(src.text_key)

    def _manifest(self, data: bytes, media_type: str) -> str:
        from activities.egress import build

        return build.manifest_sha256(
            data, media_type, self._c2pa_dir, self._settings.env == "production"
        )

    @property
    def _c2pa_dir(self) -> Path:
        return self._settings.signing_path / "c2pa"

    def _index(self, ref: eg.FileRef, p: eg.Prepared) -> None:
        body = {"release_id": p.release.release_id, "tenant": p.release.tenant, "name": ref.name}
        self._store.create(eg.by_file_key(ref.sha256), json.dumps(body, sort_keys=True).encode())

    @activity.defn(name="custody.release.record")
    @coded(Code.STORE_UNAVAILABLE)
    def record(self, r: eg.Rendered) -> eg.Recorded:
        p, info = r.prepared, activity.info()
        rid, tenant = p.release.release_id, p.release.tenant
        event = record_egress(
            self._store,
            tenant,
            eg.EgressKind.RELEASE,
            actor=p.release.actor,
            policy=p.policy,
            documents=[s.sha256 for s in p.sources],
            bytes_sha256=r.packet_sha256,
            size=sum(f.bytes for f in r.files),
            release_id=rid,
            recipient=p.recipient.name,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            once=eg.release_event_key(tenant, rid),
        )
        return eg.Recorded(rendered=r, event_seq=event.seq, event_hash=event.hash)

    @activity.defn(name="custody.release.deliver")
    @coded(Code.RECIPIENT_UNREACHABLE)
    def deliver(self, r: eg.Recorded) -> eg.Delivered:
        p = r.rendered.prepared
        rid, tenant = p.release.release_id, p.release.tenant
        files = []
        for ref in r.rendered.files:
            data = self._store.get(eg.release_file_key(tenant, rid, ref.name))
            if sha256_bytes(data) != ref.sha256:
                raise DeliveryFailed(Code.SOURCE_ALTERED, f"{ref.name} changed")
            files.append(ch.PacketFile(name=ref.name, data=data))
        channel = open_channel(
            ch.RecipientChannel.of(p.recipient.kind.value, p.recipient.target),
            s3=self._s3(),
            ca_file=str(self._settings.egress_ca_file) if self._settings.egress_ca_file else None,
            limits=ch.AttemptLimits(deadline_s=self._settings.egress_push_deadline_s),
        )
        # A channel's DeliveryFailed passes through: ``coded`` turns its code into the
        # failure type, non-retryable exactly when the code is final.
        got = channel.deliver(ch.Packet(release_id=rid, files=tuple(files)))
        delivered = eg.Delivered(
            channel=eg.ChannelKind(got.channel),
            location=got.location,
            answer_sha256=got.answer_sha256,
            status=got.status,
            already_delivered=got.already_delivered,
            attempts=activity.info().attempt,  # one try per attempt
            at=datetime.now(UTC),
        )
        self._store.put(eg.release_delivery_key(tenant, rid), delivered.model_dump_json().encode())
        return delivered

    def _s3(self) -> ch.S3Access:
        s = self._settings
        return ch.S3Access(
            endpoint_url=s.egress_s3_endpoint_url,
            region=s.egress_s3_region,
            access_key_id=s.egress_s3_access_key_id,
            secret_access_key=s.egress_s3_secret_access_key,
        )

    @activity.defn(name="custody.release.receipt")
    @coded(Code.STORE_UNAVAILABLE)
    def receipt(self, inp: eg.ReceiptInput) -> eg.ReceiptRef:
        r, info = inp.recorded.rendered, activity.info()
        p = r.prepared
        rid, tenant = p.release.release_id, p.release.tenant
        key = eg.receipt_key(tenant, rid)
        if not self._store.exists(key):
            receipt = eg.Receipt(
                release_id=rid,
                tenant=tenant,
                recipient=p.recipient.name,
                policy=p.policy.name,
                policy_sha256=p.policy.sha256(),
                files=r.files,
                sources=[s.sha256 for s in p.sources],
                packet_sha256=r.packet_sha256,
                manifest_sha256s=r.manifest_sha256s,
                delivery=inp.delivered,
                egress_event_seq=inp.recorded.event_seq,
                egress_event_hash=inp.recorded.event_hash,
                workflow_id=info.workflow_id or "",
                run_id=info.workflow_run_id or "",
                signed_at=datetime.now(UTC),
            )
            self._signer.publish(self._store)
            signed = SignedReceipt.sign(receipt, self._signer)
            self._store.create(key, signed.canonical())
        body = self._store.get(key)
        event = append_once(
            self._store,
            tenant,
            eg.RECEIPT_EVENT,
            once=f"{key}.event",
            actor=p.release.actor,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            detail={"release_id": rid, "receipt_sha256": sha256_bytes(body)},
        )
        return eg.ReceiptRef(key=key, sha256=sha256_bytes(body), event_seq=event.seq)

    @activity.defn(name="custody.release.close")
    @coded(Code.STORE_UNAVAILABLE)
    def close(self, inp: eg.CloseInput) -> eg.Recorded:
        p, info = inp.recorded.rendered.prepared, activity.info()
        rid, tenant = p.release.release_id, p.release.tenant
        append_once(
            self._store,
            tenant,
            eg.FAILED_EVENT,
            once=f"{eg.release_delivery_key(tenant, rid)}.failed",
            actor=p.release.actor,
            code=inp.code,
            workflow_id=info.workflow_id,
            run_id=info.workflow_run_id,
            detail={"release_id": rid, "egress_event_seq": inp.recorded.event_seq},
        )
        return inp.recorded
