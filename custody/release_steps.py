"""The release workflow's steps: one input and one result model per activity.

    ReleaseInput ─ PrepareInput ─> Prepared    the pinned policy, the recipient, the sources
                   RenderInput  ─> Rendered    the files, their packet hash, C2PA manifests
                   RecordInput  ─> Recorded    the egress event's number and hash
                   DeliverInput ─> Delivered   what the recipient's channel said
                   ReceiptInput ─> ReceiptRef  the signed receipt's key, hash and event
                   CloseInput   ─> Closed      the ``egress.failed`` event's number

The workflow builds each input (:class:`Inputs`) from the release's input and
the results before it, and each result carries only what its step adds, so
history holds the policy, the recipient and the file list where a step needs
them rather than nested inside every later message. Every result states the
attempt that made it (``activity.info().attempt``).

Releases started before these models nest each result inside the next input
(``custody.release_steps_v1``); the activities take both shapes. Light on
purpose: the release workflow imports it through the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from custody import egress as eg
from custody.models import omit_none


class _Input(BaseModel):
    # A nested v1 payload never passes for one of these: its extra keys are refused.
    model_config = ConfigDict(extra="forbid")


class _Result(BaseModel):
    #: The attempt that made this result; 1 where a v1 result did not say.
    attempt: int = 1


class PrepareInput(_Input):
    tenant: str | None
    recipient: str
    policy_sha256: str
    documents: list[str]


class Prepared(_Result):
    policy: eg.Policy
    recipient: eg.Recipient
    sources: list[eg.SourceDoc]
    #: The policy's two-person rule holds this release for a second identity's approval.
    needs_approval: bool = False


class RenderInput(_Input):
    """What the released files are made from, and what their marks and claims name."""

    release_id: str
    tenant: str | None
    actor: str
    requested_at: datetime
    policy: eg.Policy
    recipient: str
    sources: list[eg.SourceDoc]


class Rendered(_Result):
    files: list[eg.FileRef]
    packet_sha256: str
    manifest_sha256s: dict[str, str] = Field(default_factory=dict)


class RecordInput(_Input):
    """The egress event, written before any byte leaves."""

    release_id: str
    tenant: str | None
    actor: str
    policy: eg.Policy
    recipient: str
    documents: list[str]
    packet_sha256: str
    size: int
    #: The request's purpose of disclosure; None: the policy's.
    purpose: str | None = None

    @model_serializer(mode="wrap")
    def _omit_no_purpose(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # Left out when unset: a worker from before the field still reads the input.
        return omit_none(handler(self), "purpose")


class Recorded(_Result):
    event_seq: int
    event_hash: str


class DeliverInput(_Input):
    """The stored files to hand to the recipient's channel; each is re-hashed first."""

    release_id: str
    tenant: str | None
    channel: eg.ChannelKind
    target: str
    files: list[eg.FileRef]
    #: The recipient's own credentials' reference (S3), never the secret itself.
    credentials: str | None = None

    @model_serializer(mode="wrap")
    def _omit_no_credentials(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # Left out when unset: a worker from before the field still reads the input.
        return omit_none(handler(self), "credentials")


class ReceiptInput(_Input):
    """Everything the signed receipt states that the workflow knows."""

    release_id: str
    tenant: str | None
    actor: str
    recipient: str
    policy: str
    policy_sha256: str
    sources: list[str]
    files: list[eg.FileRef]
    packet_sha256: str
    manifest_sha256s: dict[str, str] = Field(default_factory=dict)
    delivered: eg.Delivered
    event_seq: int
    event_hash: str

    def receipt(self, workflow_id: str, run_id: str, signed_at: datetime) -> eg.Receipt:
        """The receipt to sign: what was delivered, to whom, under what, after which event."""
        return eg.Receipt(
            release_id=self.release_id,
            tenant=self.tenant,
            recipient=self.recipient,
            policy=self.policy,
            policy_sha256=self.policy_sha256,
            files=self.files,
            sources=self.sources,
            packet_sha256=self.packet_sha256,
            manifest_sha256s=self.manifest_sha256s,
            delivery=self.delivered,
            egress_event_seq=self.event_seq,
            egress_event_hash=self.event_hash,
            workflow_id=workflow_id,
            run_id=run_id,
            signed_at=signed_at,
        )


class ReceiptRef(_Result):
    key: str
    sha256: str
    event_seq: int


class CloseInput(_Input):
    release_id: str
    tenant: str | None
    actor: str
    code: str
    event_seq: int


class Closed(_Result):
    #: The ``egress.failed`` event; None from a v1 close, which did not say.
    failed_seq: int | None = None


@dataclass(frozen=True)
class Made:
    """What a release has made by the time it delivers."""

    prepared: Prepared
    rendered: Rendered
    recorded: Recorded


@dataclass(frozen=True)
class Inputs:
    """Each step's input, from the release's input and the results before it."""

    release: eg.ReleaseInput

    def prepare(self) -> PrepareInput:
        r = self.release
        return PrepareInput(
            tenant=r.tenant,
            recipient=r.recipient,
            policy_sha256=r.policy_sha256,
            documents=r.documents,
        )

    def render(self, p: Prepared) -> RenderInput:
        r = self.release
        return RenderInput(
            release_id=r.release_id,
            tenant=r.tenant,
            actor=r.actor,
            requested_at=r.requested_at,
            policy=p.policy,
            recipient=p.recipient.name,
            sources=p.sources,
        )

    def record(self, p: Prepared, rendered: Rendered) -> RecordInput:
        r = self.release
        return RecordInput(
            release_id=r.release_id,
            tenant=r.tenant,
            actor=r.actor,
            policy=p.policy,
            recipient=p.recipient.name,
            documents=[s.sha256 for s in p.sources],
            packet_sha256=rendered.packet_sha256,
            size=sum(f.bytes for f in rendered.files),
            purpose=r.purpose,
        )

    def deliver(self, made: Made) -> DeliverInput:
        recipient = made.prepared.recipient
        return DeliverInput(
            release_id=self.release.release_id,
            tenant=self.release.tenant,
            channel=recipient.kind,
            target=recipient.target,
            files=made.rendered.files,
            credentials=recipient.credentials,
        )

    def receipt(self, made: Made, delivered: eg.Delivered) -> ReceiptInput:
        r, p, rendered = self.release, made.prepared, made.rendered
        return ReceiptInput(
            release_id=r.release_id,
            tenant=r.tenant,
            actor=r.actor,
            recipient=p.recipient.name,
            policy=p.policy.name,
            policy_sha256=p.policy.sha256(),
            sources=[s.sha256 for s in p.sources],
            files=rendered.files,
            packet_sha256=rendered.packet_sha256,
            manifest_sha256s=rendered.manifest_sha256s,
            delivered=delivered,
            event_seq=made.recorded.event_seq,
            event_hash=made.recorded.event_hash,
        )

    def close(self, made: Made, code: str) -> CloseInput:
        r = self.release
        return CloseInput(
            release_id=r.release_id,
            tenant=r.tenant,
            actor=r.actor,
            code=code,
            event_seq=made.recorded.event_seq,
        )
