"""The one-host trial names the code's settings, modules and commands."""

from __future__ import annotations

import importlib.util
from typing import Any

from starter.cli.registry import COMMANDS
from tests.deploy.settings_names import is_setting


def test_compose_runs_every_part_on_one_host(compose: dict[str, Any]) -> None:
    """Temporal on PostgreSQL, the UI, an S3 store, both workers, edge and codec server."""
    services = compose["services"]
    assert {"postgresql", "temporal", "temporal-ui", "minio"} <= set(services)
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    ours = {n: s for n, s in services.items() if s.get("image") == "custody:trial"}
    assert {"worker-io", "worker-ocr", "edge", "codec-server", "setup"} == set(ours)
    for name, svc in ours.items():
        assert svc["read_only"] is True and svc["cap_drop"] == ["ALL"], name
        unknown = [k for k in svc["environment"] if k.startswith("CUSTODY_") and not is_setting(k)]
        assert unknown == [], (name, unknown)
        command = svc["command"]
        if command[:2] == ["python", "-m"]:
            assert importlib.util.find_spec(command[2]) is not None, command
        elif command[0] == "custody":
            assert command[1] in COMMANDS, command
    # The codec server admits the UI's origin only: localhost on CUSTODY_TEMPORAL_UI_PORT.
    ui_port = services["codec-server"]["environment"]["CUSTODY_TEMPORAL_UI_PORT"]
    assert any(p.endswith(f":{ui_port}:8080") for p in services["temporal-ui"]["ports"])
