"""The submitter names a document's type: ``Custody-Document-Type`` at the edge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from custody.doctypes import TYPE_NAME
from custody.errors import Code
from custody.state.rules import FieldsPolicy, set_policy
from starter.edge.openapi import SPEC
from starter.edge.upload import UploadError, read_options
from tests.starter.edge.conftest import EdgeHarness, png

PNG = {"content-type": "image/png"}
INCIDENT = {"fields": {"reference": {"labels": ["Incident No"], "type": "identifier"}}}


def test_edge_document_type_header_is_read_and_malformed_names_refused(settings_for: Any) -> None:
    """A type's name is carried on; a value no type could be named is 400 BAD_HEADER."""
    settings = settings_for()
    assert read_options(PNG, settings).document_type is None
    named = read_options({**PNG, "custody-document-type": "referral"}, settings)
    assert named.document_type == "referral"
    for bad in ("Invoice", "in voice", "x" * 41):
        with pytest.raises(UploadError) as refused:
            read_options({**PNG, "custody-document-type": bad}, settings)
        assert (refused.value.status, refused.value.code) == (400, Code.BAD_HEADER)


async def test_edge_document_type_must_be_one_the_tenant_knows(
    edge_for: Callable[..., EdgeHarness], tenant: str
) -> None:
    """Built-in, shipped and the tenant's own types are accepted; another name is 422
    UNKNOWN_TYPE before the body is kept."""
    async with edge_for() as edge:
        auth = edge.tenant(tenant)
        set_policy(
            edge.client.store,
            tenant,
            FieldsPolicy.model_validate({"types": {"incident": INCIDENT}}),
        )
        answers = {}
        for n, kind in enumerate(("referral", "discharge", "incident", "invoice")):
            headers = {**auth, "Content-Type": "image/png", "Custody-Document-Type": kind}
            resp = await edge.http.put("/v1/documents", content=png(300 + n), headers=headers)
            answers[kind] = (resp.status_code, resp.json().get("error"))
        assert answers == {
            "referral": (202, None),
            "discharge": (202, None),
            "incident": (202, None),
            "invoice": (422, "UNKNOWN_TYPE"),
        }
        assert len(list(edge.client.store.list(f"intake/{tenant}/"))) == 3


def test_edge_document_type_header_is_in_the_contract() -> None:
    """The OpenAPI document states the header's pattern and the 422 it can answer."""
    put = SPEC["paths"]["/v1/documents"]["put"]
    header = next(p for p in put["parameters"] if p["name"] == "Custody-Document-Type")
    assert header["schema"] == {"type": "string", "pattern": TYPE_NAME}
    assert "UNKNOWN_TYPE" in put["responses"]["422"]["description"]
