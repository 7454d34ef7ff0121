"""The release steps' first shapes, kept for releases started before the step models.

Before the patch ``release-step-models`` each step's input nested the result
before it: ``Prepared`` (the ``ReleaseInput``, policy, recipient and sources)
inside ``Rendered`` inside ``Recorded`` inside ``ReceiptInput`` and
``CloseInput``. ``ReleaseWorkflow`` is auto-upgrade, so a release started then
may run on to its end on today's code: its workflow keeps sending these shapes
(:class:`Inputs`, built from today's results), and each activity takes them
and works on the :meth:`upgraded` input. Today's result models read a v1
result from history too: it holds their fields, and more.

Remove this module, and the v1 branch of ``workflows/release.py``, once no
release started before the patch can still be running (``deprecate_patch``
first, then delete).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from custody import egress as eg
from custody import release_steps as steps


class Prepared(BaseModel):
    """v1 input of render."""

    release: eg.ReleaseInput
    policy: eg.Policy
    recipient: eg.Recipient
    sources: list[eg.SourceDoc]

    def upgraded(self) -> steps.RenderInput:
        return steps.Inputs(self.release).render(_prepared(self))


class Rendered(BaseModel):
    """v1 input of record."""

    prepared: Prepared
    files: list[eg.FileRef]
    packet_sha256: str
    manifest_sha256s: dict[str, str] = Field(default_factory=dict)

    def upgraded(self) -> steps.RecordInput:
        return steps.Inputs(self.prepared.release).record(_prepared(self.prepared), _rendered(self))


class Recorded(BaseModel):
    """v1 input of deliver."""

    rendered: Rendered
    event_seq: int
    event_hash: str

    def upgraded(self) -> steps.DeliverInput:
        return steps.Inputs(self.rendered.prepared.release).deliver(_made(self))


class ReceiptInput(BaseModel):
    """v1 input of receipt."""

    recorded: Recorded
    delivered: eg.Delivered

    def upgraded(self) -> steps.ReceiptInput:
        made = _made(self.recorded)
        return steps.Inputs(self.recorded.rendered.prepared.release).receipt(made, self.delivered)


class CloseInput(BaseModel):
    """v1 input of close."""

    recorded: Recorded
    code: str

    def upgraded(self) -> steps.CloseInput:
        release = self.recorded.rendered.prepared.release
        return steps.Inputs(release).close(_made(self.recorded), self.code)


@dataclass(frozen=True)
class Inputs:
    """The v1 input of each step, from the release's input and today's results."""

    release: eg.ReleaseInput

    def prepare(self) -> eg.ReleaseInput:
        return self.release

    def render(self, p: steps.Prepared) -> Prepared:
        return Prepared(
            release=self.release, policy=p.policy, recipient=p.recipient, sources=p.sources
        )

    def record(self, p: steps.Prepared, rendered: steps.Rendered) -> Rendered:
        return Rendered(
            prepared=self.render(p),
            files=rendered.files,
            packet_sha256=rendered.packet_sha256,
            manifest_sha256s=rendered.manifest_sha256s,
        )

    def deliver(self, made: steps.Made) -> Recorded:
        r = made.recorded
        rendered = self.record(made.prepared, made.rendered)
        return Recorded(rendered=rendered, event_seq=r.event_seq, event_hash=r.event_hash)

    def receipt(self, made: steps.Made, delivered: eg.Delivered) -> ReceiptInput:
        return ReceiptInput(recorded=self.deliver(made), delivered=delivered)

    def close(self, made: steps.Made, code: str) -> CloseInput:
        return CloseInput(recorded=self.deliver(made), code=code)


def _prepared(p: Prepared) -> steps.Prepared:
    return steps.Prepared(policy=p.policy, recipient=p.recipient, sources=p.sources)


def _rendered(r: Rendered) -> steps.Rendered:
    return steps.Rendered(
        files=r.files, packet_sha256=r.packet_sha256, manifest_sha256s=r.manifest_sha256s
    )


def _made(r: Recorded) -> steps.Made:
    recorded = steps.Recorded(event_seq=r.event_seq, event_hash=r.event_hash)
    return steps.Made(_prepared(r.rendered.prepared), _rendered(r.rendered), recorded)
