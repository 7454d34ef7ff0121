"""``custody fields policy set|show`` declares document types as configuration, no code."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import custody_cli, make_settings

INCIDENT = {
    "cues": ["incident"],
    "fields": {
        "reference": {
            "labels": ["Incident No", "Ref"],
            "type": "identifier",
            "pattern": "INC-\\d{4}",
        },
        "occurred": {"labels": ["Date of incident"], "type": "date", "required": True},
    },
}


async def test_fields_policy_set_declares_a_type_and_show_lists_it(tmp_path: Path) -> None:
    """A policy file with ``types`` is stored as the next version; show gives it back."""
    settings = make_settings(tmp_path, "127.0.0.1:1")
    file = tmp_path / "policy.json"
    file.write_text(
        json.dumps({"expected_types": ["incident", "discharge"], "types": {"incident": INCIDENT}})
    )
    rc, out = await custody_cli(
        settings, "fields", "policy", "set", "--file", str(file), tenant="clinic-a"
    )
    assert rc == 0 and out["version"] == 1
    rc, shown = await custody_cli(settings, "fields", "policy", "show", tenant="clinic-a")
    assert (
        rc == 0 and shown["policy"]["types"]["incident"]["fields"]["occurred"]["required"] is True
    )
    assert shown["policy"]["expected_types"] == ["incident", "discharge"]


async def test_fields_policy_set_refuses_a_type_it_cannot_judge(tmp_path: Path) -> None:
    """A built-in name, an unknown expected type or a broken pattern: exit 2, a coded error."""
    settings = make_settings(tmp_path, "127.0.0.1:1")
    broken = {"fields": {"reference": {"labels": ["Ref"], "pattern": "(["}}}
    for policy, says in (
        ({"types": {"referral": INCIDENT}}, "built in"),
        ({"expected_types": ["invoice"]}, "no document type invoice"),
        ({"types": {"incident": broken}}, "does not compile"),
    ):
        file = tmp_path / "policy.json"
        file.write_text(json.dumps(policy))
        rc, out = await custody_cli(settings, "fields", "policy", "set", "--file", str(file))
        assert rc == 2 and out["error"] == "BAD_REQUEST" and says in out["message"], out
