"""The release step models against what the code before them wrote.

Every input that code scheduled and every result it recorded (its saved
histories, ``tests/workflows/histories/release-*-v1.json``) decodes, through the
project's converter, into the type the activity takes or the workflow reads
today; each v1 input upgrades to today's input of its step.
"""

from __future__ import annotations

import typing
from typing import Any

import pytest
from temporalio.client import WorkflowHistory

from activities.release import ReleaseActivities
from custody import egress as eg
from custody import release_steps as steps
from custody import release_steps_v1 as v1
from custody.converter import data_converter
from tests.workflows.test_replay import HISTORIES

#: Each activity: its method, the v1 input type, and today's input and result types.
STEPS: dict[str, tuple[Any, type, type, type]] = {
    "custody.release.prepare": (
        ReleaseActivities.prepare,
        eg.ReleaseInput,
        steps.PrepareInput,
        steps.Prepared,
    ),
    "custody.release.render": (
        ReleaseActivities.render,
        v1.Prepared,
        steps.RenderInput,
        steps.Rendered,
    ),
    "custody.release.record": (
        ReleaseActivities.record,
        v1.Rendered,
        steps.RecordInput,
        steps.Recorded,
    ),
    "custody.release.deliver": (
        ReleaseActivities.deliver,
        v1.Recorded,
        steps.DeliverInput,
        eg.Delivered,
    ),
    "custody.release.receipt": (
        ReleaseActivities.receipt,
        v1.ReceiptInput,
        steps.ReceiptInput,
        steps.ReceiptRef,
    ),
    "custody.release.close": (
        ReleaseActivities.close,
        v1.CloseInput,
        steps.CloseInput,
        steps.Closed,
    ),
}


def _current(value: Any) -> Any:
    return steps.Inputs(value).prepare() if isinstance(value, eg.ReleaseInput) else value.upgraded()


@pytest.mark.parametrize(
    "name", ["release-delivered-v1", "release-failed-v1", "release-refused-v1"]
)
def test_v1_history_payloads_decode_into_todays_step_types(name: str) -> None:
    """Inputs as the activities take them (then upgraded), results as the workflow reads them."""
    converter = data_converter().payload_converter
    history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
    scheduled: dict[int, str] = {}
    seen = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            a = event.activity_task_scheduled_event_attributes
            method, old, new, _ = STEPS[a.activity_type.name]
            hint = typing.get_type_hints(method)["inp"]
            [value] = converter.from_payloads(a.input.payloads, [hint])
            assert isinstance(value, old) and isinstance(_current(value), new)
            scheduled[event.event_id] = a.activity_type.name
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            kind = scheduled[done.scheduled_event_id]
            method, _, _, result = STEPS[kind]
            hint = typing.get_type_hints(method)["return"]
            [value] = converter.from_payloads(done.result.payloads, [hint])
            assert isinstance(value, result) and value.attempt == 1
            seen.append(kind.rsplit(".", 1)[1])
    expected = {
        "release-delivered-v1": ["prepare", "render", "record", "deliver", "receipt"],
        "release-failed-v1": ["prepare", "render", "record", "close"],
        "release-refused-v1": [],
    }
    assert seen == expected[name]


def test_v1_inputs_upgrade_to_what_the_workflow_builds_today() -> None:
    """A v1 input names the same release, files, events and codes as today's input."""
    history = WorkflowHistory.from_json("d", (HISTORIES / "release-delivered-v1.json").read_text())
    converter = data_converter().payload_converter
    inputs = {}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            a = event.activity_task_scheduled_event_attributes
            old = STEPS[a.activity_type.name][1]
            [inputs[old]] = converter.from_payloads(a.input.payloads, [old])
    release: eg.ReleaseInput = inputs[eg.ReleaseInput]
    receipt = inputs[v1.ReceiptInput]
    recorded = receipt.recorded
    made = steps.Made(
        steps.Prepared(
            policy=recorded.rendered.prepared.policy,
            recipient=recorded.rendered.prepared.recipient,
            sources=recorded.rendered.prepared.sources,
        ),
        steps.Rendered(
            files=recorded.rendered.files,
            packet_sha256=recorded.rendered.packet_sha256,
            manifest_sha256s=recorded.rendered.manifest_sha256s,
        ),
        steps.Recorded(event_seq=recorded.event_seq, event_hash=recorded.event_hash),
    )
    today = steps.Inputs(release)
    assert receipt.upgraded() == today.receipt(made, receipt.delivered)
    assert inputs[v1.Recorded].upgraded() == today.deliver(made)
    assert inputs[v1.Rendered].upgraded() == today.record(made.prepared, made.rendered)
    assert inputs[v1.Prepared].upgraded() == today.render(made.prepared)
