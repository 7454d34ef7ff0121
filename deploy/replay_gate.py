"""The gate before a new build id takes traffic: replay histories on this build's code.

Run from the new build's image (or a checkout of it), before the build is made
current or ramped (deploy/RUNBOOK.md, "Roll out a build"):

    python deploy/replay_gate.py                       # the saved histories only
    python deploy/replay_gate.py --live 50             # and the newest 50 runs of each type
    python deploy/replay_gate.py --live 50 --promote   # then make this build current

Saved histories (tests/workflows/histories, or /opt/custody/share/histories in
the image) cover every terminal state of both workflow types and the shapes
of earlier versions still in flight. ``--live`` adds the cluster's newest
runs, open and closed, replayed with the keyring's converter (payloads are
sealed). Any nondeterminism fails the gate with exit status 1 and nothing is
promoted. ``--promote`` sets ``CUSTODY_DEPLOYMENT_NAME`` / ``CUSTODY_BUILD_ID``
as the worker deployment's current version. The summary is one JSON object
on stdout: workflow ids and error kinds only, never payloads.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer

from custody.converter import data_converter
from custody.egress import RELEASE_WORKFLOW_NAME
from custody.queues import WORKFLOW_NAME
from custody.reviews import REVIEW_WORKFLOW_NAME
from custody.settings import Settings
from custody.temporal import connect_temporal
from workers.versioning import VERSIONED_WORKFLOWS, WORKFLOWS

_HERE = Path(__file__).resolve().parent
_SAVED = (_HERE.parent / "tests" / "workflows" / "histories", _HERE / "histories")


#: What an unversioned and a versioned worker register: both must replay.
_WORKER_SHAPES = (WORKFLOWS, VERSIONED_WORKFLOWS)


async def replay(histories: list[WorkflowHistory], converter: DataConverter) -> list[str]:
    """The ids of the histories that do not replay on this code, with the error's kind."""
    failed = []
    for workflows in _WORKER_SHAPES:
        replayer = Replayer(workflows=workflows, data_converter=converter)
        for history in histories:
            result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
            if result.replay_failure is not None:
                failed.append(f"{history.workflow_id}: {type(result.replay_failure).__name__}")
    return failed


def saved(folder: Path) -> list[WorkflowHistory]:
    return [
        WorkflowHistory.from_json(path.stem, path.read_text())
        for path in sorted(folder.glob("*.json"))
    ]


async def live(client: Client, per_type: int) -> list[WorkflowHistory]:
    """The newest ``per_type`` runs of each workflow type, open or closed."""
    found = []
    for kind in (WORKFLOW_NAME, RELEASE_WORKFLOW_NAME, REVIEW_WORKFLOW_NAME):
        query = f"WorkflowType = '{kind}'"
        async for wf in client.list_workflows(query, limit=per_type):
            found.append(await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history())
    return found


async def promote(client: Client, settings: Settings) -> None:
    if not settings.deployment_name or not settings.build_id:
        raise SystemExit("--promote needs CUSTODY_DEPLOYMENT_NAME and CUSTODY_BUILD_ID")
    await client.workflow_service.set_worker_deployment_current_version(
        SetWorkerDeploymentCurrentVersionRequest(
            namespace=settings.temporal_namespace,
            deployment_name=settings.deployment_name,
            build_id=settings.build_id,
            identity="custody-replay-gate",
        )
    )


async def gate(args: argparse.Namespace) -> dict[str, Any]:
    folder = args.histories or next((f for f in _SAVED if f.is_dir()), _SAVED[0])
    histories = saved(folder)
    summary: dict[str, Any] = {"histories": str(folder), "saved": len(histories)}
    failed = await replay(histories, data_converter())
    settings = Settings()
    client = None
    if args.live or args.promote:
        client = await connect_temporal(settings, service="custody-replay-gate")
    if client is not None and args.live:
        recent = await live(client, args.live)
        summary["live"] = len(recent)
        failed += await replay(recent, client.data_converter)
    summary |= {"failed": failed, "ok": bool(histories) and not failed}
    if client is not None and args.promote and summary["ok"]:
        await promote(client, settings)
        summary["promoted"] = f"{settings.deployment_name}:{settings.build_id}"
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=Path, default=None, help="folder of saved histories")
    parser.add_argument("--live", type=int, default=0, help="also the newest N runs of each type")
    parser.add_argument("--promote", action="store_true", help="make this build current if ok")
    summary = asyncio.run(gate(parser.parse_args()))
    print(json.dumps(summary, indent=1))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
