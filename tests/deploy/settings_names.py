"""Which ``CUSTODY_*`` variables the code reads: the settings' own field names."""

from __future__ import annotations

from typing import Any

from custody.settings import Limits, Settings

#: Read by deploy/healthcheck.py, the image's HEALTHCHECK, not by Settings.
IMAGE_ONLY = frozenset({"CUSTODY_HEALTH_PORT"})


def is_setting(name: str) -> bool:
    if name in IMAGE_ONLY:
        return True
    if name.startswith("CUSTODY_LIMIT_"):
        return name.removeprefix("CUSTODY_LIMIT_").lower() in Limits.model_fields
    return name.removeprefix("CUSTODY_").lower() in Settings.model_fields


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: str(v.get("value", "")) for v in container.get("env", [])}
