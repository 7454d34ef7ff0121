"""The Kubernetes manifests parse, are locked down, and name what the code names."""

from __future__ import annotations

import importlib.util
from typing import Any

from custody.queues import IO_TASK_QUEUE, OCR_GPU_TASK_QUEUE, OCR_TASK_QUEUE
from starter.cli.registry import COMMANDS
from tests.deploy.settings_names import env_of, is_setting

IMAGE = "registry.example.com/custody:"


def _pod(dep: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = dep["spec"]["template"]["spec"]
    return spec


def _containers(dep: dict[str, Any]) -> list[dict[str, Any]]:
    pod = _pod(dep)
    return [*pod.get("initContainers", []), *pod["containers"]]


def test_manifests_every_pod_is_locked_down(deployments: dict[str, dict[str, Any]]) -> None:
    """Non-root, RuntimeDefault seccomp, no token, read-only root, no escalation, no caps."""
    assert len(deployments) == 5
    for name, dep in deployments.items():
        pod = _pod(dep)
        assert pod["automountServiceAccountToken"] is False, name
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", name
        for c in _containers(dep):
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True, (name, c["name"])
            assert sc["allowPrivilegeEscalation"] is False, (name, c["name"])
            assert sc["capabilities"]["drop"] == ["ALL"], (name, c["name"])
            assert "add" not in sc["capabilities"], (name, c["name"])
            assert {"requests", "limits"} <= set(c["resources"]), (name, c["name"])
            assert c["image"].startswith(IMAGE), (name, c["image"])
        for c in pod["containers"]:
            assert "readinessProbe" in c and "livenessProbe" in c, (name, c["name"])


def test_manifests_keys_are_files_never_environment(deployments: dict[str, Any]) -> None:
    """Secrets reach pods as read-only volumes; no variable is filled from a Secret."""
    for name, dep in deployments.items():
        for c in _containers(dep):
            for var in c.get("env", []):
                assert "valueFrom" not in var, (name, var["name"])
            assert all("secretRef" not in src for src in c.get("envFrom", [])), name
            secret_vols = {v["name"] for v in _pod(dep)["volumes"] if "secret" in v}
            for mount in c.get("volumeMounts", []):
                if mount["name"] in secret_vols:
                    assert mount.get("readOnly") is True, (name, mount)


def test_manifests_staging_is_ram(deployments: dict[str, Any]) -> None:
    """Every writable path a container has is a memory-backed emptyDir (tmpfs)."""
    for name, dep in deployments.items():
        volumes = {v["name"]: v for v in _pod(dep)["volumes"]}
        for c in _containers(dep):
            for mount in c.get("volumeMounts", []):
                if not mount.get("readOnly"):
                    assert volumes[mount["name"]]["emptyDir"]["medium"] == "Memory", (name, mount)


def test_manifests_settings_queues_and_ports_match_the_code(deployments: dict[str, Any]) -> None:
    """Every CUSTODY_* is a setting, queues are the code's, ports are the ones served."""
    for name, dep in deployments.items():
        for c in _pod(dep)["containers"]:
            env = env_of(c)
            assert all(is_setting(k) for k in env), (
                name,
                sorted(k for k in env if not is_setting(k)),
            )
            assert env.get("CUSTODY_IO_TASK_QUEUE", IO_TASK_QUEUE) == IO_TASK_QUEUE
            queue = env.get("CUSTODY_OCR_TASK_QUEUE", OCR_TASK_QUEUE)
            assert queue in (OCR_TASK_QUEUE, OCR_GPU_TASK_QUEUE), name
            ports = {p["containerPort"] for p in c.get("ports", [])}
            for key in ("CUSTODY_IO_METRICS_PORT", "CUSTODY_OCR_METRICS_PORT"):
                if key in env:
                    assert int(env[key]) in ports and env["CUSTODY_HEALTH_PORT"] == env[key]
            if "--port" in c["command"]:
                assert int(c["command"][c["command"].index("--port") + 1]) in ports


def test_manifests_commands_exist(deployments: dict[str, Any]) -> None:
    """Each container runs a module that exists or a ``custody`` command the CLI has."""
    for dep in deployments.values():
        command = _pod(dep)["containers"][0]["command"]
        if command[:2] == ["python", "-m"]:
            assert importlib.util.find_spec(command[2]) is not None, command
        else:
            assert command[0] == "custody" and command[1] in COMMANDS, command


def test_manifests_gpu_pool_has_its_own_queue_and_gpus(deployments: dict[str, Any]) -> None:
    """The GPU pool polls its own queue, asks for a GPU and lands only on GPU nodes."""
    gpu = next(d for n, d in deployments.items() if "ocr-gpu" in n)
    pod = _pod(gpu)
    worker = pod["containers"][0]
    assert env_of(worker)["CUSTODY_OCR_TASK_QUEUE"] == OCR_GPU_TASK_QUEUE
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["nodeSelector"] and pod["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_manifests_every_deployment_has_a_disruption_budget(
    k8s: list[dict[str, Any]], deployments: dict[str, Any]
) -> None:
    """A PodDisruptionBudget selects each Deployment's pods."""
    budgets = [d for d in k8s if d["kind"] == "PodDisruptionBudget"]
    for name, dep in deployments.items():
        labels = dep["spec"]["template"]["metadata"]["labels"]
        assert any(
            b["spec"]["selector"]["matchLabels"].items() <= labels.items() for b in budgets
        ), name
    policies = [d for d in k8s if d["kind"] == "NetworkPolicy"]
    assert any(
        p["spec"]["podSelector"] == {} and len(p["spec"]["policyTypes"]) == 2 for p in policies
    )


def test_manifests_gpu_pool_batches_with_concurrency_to_fill_them(
    deployments: dict[str, Any],
) -> None:
    """The GPU pool runs the batched engine, with enough OCR activities to fill its batches:
    one page in flight per activity, so concurrency covers every stream's batch."""
    gpu = next(d for n, d in deployments.items() if "ocr-gpu" in n)
    env = env_of(_pod(gpu)["containers"][0])
    pages, streams = int(env["CUSTODY_OCR_BATCH_PAGES"]), int(env["CUSTODY_OCR_BATCH_STREAMS"])
    assert pages > 1 and streams > 1 and env["CUSTODY_OCR_DEVICE"] == "cuda"
    assert int(env["CUSTODY_OCR_CONCURRENCY"]) >= streams * 2
