"""Consent on release: a policy with ``require_consent`` lets no referral out without it.

Consent is read from the document's sealed fields (``activities.rules.check``),
whose hash the signed record holds: the object is re-hashed before it is
believed. A referral whose consent is false, was not read surely, or whose
fields were never read (a record from before fields) is refused with
``CONSENT_REQUIRED``; other document types carry no consent and pass.
"""

from __future__ import annotations

import hashlib

from custody.errors import Code, EgressRefused
from custody.fields import DocType, Extraction
from custody.models import ResultRecord
from custody.stores import ObjectStore


def require_consent(store: ObjectStore, record: ResultRecord) -> None:
    """Refuse unless ``record``'s document is not a referral or its consent is true."""
    short = record.sha256[:12]
    if record.fields_key is None:
        raise EgressRefused(Code.CONSENT_REQUIRED, f"document {short}: no fields read")
    body = store.get(record.fields_key)
    if hashlib.sha256(body).hexdigest() != record.fields_sha256:
        raise EgressRefused(Code.SOURCE_ALTERED, f"fields of {short} no longer hash")
    extraction = Extraction.model_validate_json(body)
    if extraction.classification.type != DocType.REFERRAL:
        return
    if extraction.value("consent") is not True:
        raise EgressRefused(Code.CONSENT_REQUIRED, f"referral {short}: consent not given")
