"""The document types Custody ships configured, for every tenant: today ``discharge``.

Each is a JSON file beside this module in exactly the form a tenant writes
under ``types`` in its fields policy, read with the same model, so a shipped
type is an example to copy and nothing a tenant's own cannot do. A tenant
that declares a type of the same name replaces the shipped one.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from custody.doctypes.spec import TypeSpec


@cache
def shipped_types() -> dict[str, TypeSpec]:
    """Every shipped type by name, read once per process."""
    folder = resources.files("custody.doctypes")
    found = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            found[entry.name.removesuffix(".json")] = TypeSpec.model_validate(data)
    return found
