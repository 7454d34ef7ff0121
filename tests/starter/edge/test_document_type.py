"""The submitter names a document's type: ``Custody-Document-Type`` at the edge."""

from __future__ import annotations

from typing import Any

import pytest

from custody.errors import Code
from starter.edge.openapi import SPEC
from starter.edge.upload import UploadError, read_options

PNG = {"content-type": "image/png"}


def test_edge_document_type_header_is_read_and_unknown_types_refused(settings_for: Any) -> None:
    """A known type is carried on; any other value is 400 BAD_HEADER before the body is read."""
    settings = settings_for()
    assert read_options(PNG, settings).document_type is None
    named = read_options({**PNG, "custody-document-type": "referral"}, settings)
    assert named.document_type == "referral"
    with pytest.raises(UploadError) as refused:
        read_options({**PNG, "custody-document-type": "invoice"}, settings)
    assert (refused.value.status, refused.value.code) == (400, Code.BAD_HEADER)


def test_edge_document_type_header_is_in_the_contract() -> None:
    """The OpenAPI document lists the header with exactly the known types."""
    params = SPEC["paths"]["/v1/documents"]["put"]["parameters"]
    header = next(p for p in params if p["name"] == "Custody-Document-Type")
    assert header["schema"]["enum"] == ["form", "receipt", "referral"]
