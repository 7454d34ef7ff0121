"""The audit-seal CronJob seals what the key-less OCR workers append, as locked down as a worker."""

from __future__ import annotations

from typing import Any

from starter.cli import audit
from starter.cli.registry import build_parser
from tests.deploy.test_manifests import IMAGE

SIGNING_SECRET = "custody-signing"


def _job(k8s: list[dict[str, Any]]) -> dict[str, Any]:
    jobs = [d for d in k8s if d["kind"] == "CronJob"]
    assert [j["metadata"]["name"] for j in jobs] == ["custody-audit-seal"]
    pod: dict[str, Any] = jobs[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return pod


def _secrets(pod: dict[str, Any]) -> set[str]:
    return {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}


def test_seal_job_runs_audit_seal_with_the_signing_key(k8s: list[dict[str, Any]]) -> None:
    """The job runs ``custody audit seal --all-tenants`` (a command the CLI parses) with the key."""
    pod = _job(k8s)
    command = pod["containers"][0]["command"]
    assert command[:3] == ["python", "-m", "starter.cli.main"]
    args = build_parser(command[3:]).parse_args(command[3:])
    assert args.handler is audit._seal and args.all_tenants and args.json
    assert SIGNING_SECRET in _secrets(pod)


def test_seal_job_pod_is_locked_down(k8s: list[dict[str, Any]]) -> None:
    """Non-root, no token, read-only root, no escalation or caps, RAM-only writable paths."""
    pod = _job(k8s)
    assert pod["automountServiceAccountToken"] is False and pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    ram = {v["name"] for v in pod["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"}
    secrets = {v["name"] for v in pod["volumes"] if "secret" in v}
    for c in [*pod["initContainers"], *pod["containers"]]:
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"], c["name"]
        assert sc["capabilities"] == {"drop": ["ALL"]} and c["image"].startswith(IMAGE)
        for mount in c["volumeMounts"]:
            assert mount["name"] in ram or (mount["name"] in secrets and mount["readOnly"])


def test_seal_job_ocr_pods_never_get_the_signing_key(deployments: dict[str, Any]) -> None:
    """The pods that handle untrusted pixels hold no signing key: the job seals for them."""
    ocr = [d for name, d in deployments.items() if "worker-ocr" in name]
    assert len(ocr) == 2
    for dep in ocr:
        assert SIGNING_SECRET not in _secrets(dep["spec"]["template"]["spec"])
