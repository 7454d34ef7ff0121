"""KEDA scales each worker Deployment on its own task queue's backlog, per build id."""

from __future__ import annotations

from typing import Any

from custody.queues import IO_TASK_QUEUE
from tests.deploy.settings_names import env_of

#: KEDA's temporal trigger metadata (keda.sh/docs/2.22/scalers/temporal).
TRIGGER_FIELDS = frozenset(
    {
        "endpoint",
        "namespace",
        "taskQueue",
        "queueTypes",
        "targetQueueSize",
        "activationTargetQueueSize",
        "workerDeploymentName",
        "workerDeploymentBuildId",
        "tlsServerName",
    }
)


def test_autoscaling_every_worker_scales_on_its_own_queue(
    k8s: list[dict[str, Any]], deployments: dict[str, dict[str, Any]]
) -> None:
    """Each worker Deployment has a temporal trigger on the queue and version it polls."""
    scaled = {d["spec"]["scaleTargetRef"]["name"]: d for d in k8s if d["kind"] == "ScaledObject"}
    workers = {n: d for n, d in deployments.items() if n.startswith("custody-worker-")}
    assert set(scaled) == set(workers) and len(workers) == 3
    config = next(d for d in k8s if d["kind"] == "ConfigMap")["data"]
    for name, dep in workers.items():
        env = env_of(dep["spec"]["template"]["spec"]["containers"][0])
        (trigger,) = scaled[name]["spec"]["triggers"]
        meta = trigger["type"] == "temporal" and trigger["metadata"]
        assert meta and set(meta) <= TRIGGER_FIELDS, meta
        polled = IO_TASK_QUEUE if "worker-io" in name else env["CUSTODY_OCR_TASK_QUEUE"]
        assert meta["taskQueue"] == polled, name
        assert set(meta["queueTypes"].split(",")) <= {"workflow", "activity"}
        assert ("workflow" in meta["queueTypes"]) == ("worker-io" in name)
        assert meta["workerDeploymentName"] == env["CUSTODY_DEPLOYMENT_NAME"]
        assert meta["workerDeploymentBuildId"] == env["CUSTODY_BUILD_ID"]
        assert meta["endpoint"] == config["CUSTODY_TEMPORAL_ADDRESS"]
        assert meta["namespace"] == config["CUSTODY_TEMPORAL_NAMESPACE"]
        assert int(meta["targetQueueSize"]) > 0 and int(meta["activationTargetQueueSize"]) >= 0
        assert env["CUSTODY_BUILD_ID"] in name
