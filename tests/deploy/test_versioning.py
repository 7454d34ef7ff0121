"""Worker Versioning: settings -> deployment version, a behaviour per workflow type, the gate."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from uuid import uuid4

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import VersioningBehavior as ProtoBehavior
from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client
from temporalio.common import VersioningBehavior
from temporalio.service import RPCError

from custody.errors import ConfigurationError
from custody.models import DocState
from custody.settings import Settings
from starter.client.submit import submit, wait
from tests.deploy.conftest import DEPLOY
from tests.helpers import Rig
from workers.common import deployment_config
from workers.versioning import VERSIONED_WORKFLOWS, WORKFLOWS
from workflows.document import DocumentWorkflow
from workflows.outcomes import QuarantinedDocument, RejectedDocument
from workflows.preview import PreviewWorkflow
from workflows.redact import RedactWorkflow
from workflows.release import ReleaseWorkflow
from workflows.review import ReviewWorkflow


def test_versioning_needs_both_name_and_build_id(tmp_path: Path) -> None:
    """Unset: unversioned; both: that version; one alone: a configuration error."""
    assert deployment_config(Settings(home=tmp_path)) is None
    config = deployment_config(Settings(home=tmp_path, deployment_name="custody", build_id="b7"))
    assert config is not None and config.use_worker_versioning
    assert config.version.deployment_name == "custody" and config.version.build_id == "b7"
    with pytest.raises(ConfigurationError):
        deployment_config(Settings(home=tmp_path, build_id="b7"))


def test_versioning_each_workflow_type_states_its_behaviour() -> None:
    """Documents, previews, views and concluded outcomes are pinned; releases and reviews
    (which may wait days) auto-upgrade; each under its registered name."""
    behaviours = {}
    for cls in VERSIONED_WORKFLOWS:
        defn = workflow._Definition.must_from_class(cls)
        behaviours[defn.name] = defn.versioning_behavior
    pinned, upgrading = VersioningBehavior.PINNED, VersioningBehavior.AUTO_UPGRADE
    wanted: dict[type, VersioningBehavior] = {
        DocumentWorkflow: pinned,
        ReleaseWorkflow: upgrading,
        PreviewWorkflow: pinned,
        RedactWorkflow: pinned,
        ReviewWorkflow: upgrading,
        RejectedDocument: pinned,
        QuarantinedDocument: pinned,
    }
    assert list(wanted) == WORKFLOWS
    plain = [workflow._Definition.must_from_class(c) for c in WORKFLOWS]
    assert behaviours == {d.name: wanted[c] for d, c in zip(plain, WORKFLOWS, strict=True)}
    # The base classes state none: an unversioned worker must not send one.
    assert {d.versioning_behavior for d in plain} == {VersioningBehavior.UNSPECIFIED}


async def _make_current(client: Client, settings: Settings) -> None:
    """Make the settings' build current once the server has seen its pollers."""
    assert settings.deployment_name and settings.build_id
    request = SetWorkerDeploymentCurrentVersionRequest(
        namespace=settings.temporal_namespace,
        deployment_name=settings.deployment_name,
        build_id=settings.build_id,
        identity="test",
    )
    for _ in range(60):
        try:
            await client.workflow_service.set_worker_deployment_current_version(request)
            return
        except RPCError:  # the version is not registered until its workers poll
            await asyncio.sleep(0.5)
    raise AssertionError("the build never became current")


async def test_versioning_a_current_build_publishes_a_pinned_document(rig: Rig) -> None:
    """Versioned workers made current publish a document, pinned to their build."""
    settings = rig.settings(deployment_name=f"custody-{uuid4().hex[:8]}", build_id="b1")
    async with rig.pipeline(settings) as custody:
        await _make_current(rig.client, settings)
        sub = await submit(custody, rig.scan(), tenant=rig.tenant)
        result = await wait(custody, sub.sha256, tenant=rig.tenant)
        desc = await rig.client.get_workflow_handle(sub.workflow_id).describe()
    assert result.state is DocState.PUBLISHED
    info = desc.raw_description.workflow_execution_info.versioning_info
    assert info.behavior == ProtoBehavior.VERSIONING_BEHAVIOR_PINNED
    assert info.deployment_version.build_id == "b1"


def test_versioning_replay_gate_passes_the_saved_histories() -> None:
    """The gate script replays every saved history on this code and says ok."""
    proc = subprocess.run(
        [sys.executable, str(DEPLOY / "replay_gate.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=DEPLOY.parent,
    )
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0 and summary["ok"], proc.stderr[-2000:]
    assert summary["saved"] >= 6 and summary["failed"] == []
