"""Fields and rules inside the output check: read, seal, judge; only names leave.

The ``custody.check`` activity already holds the recognised pages, so the
fields are read there (``activities.fields.extract``), written as a sealed
object beside the OCR scratch output (signed reference, ``custody.refs``), and
judged against the tenant's fields policy (``custody.state.rules``). What returns to
the workflow is the object's key and signature, the document type and the
names of fields a person must review: values never reach history, logs,
metrics or search attributes. Publish copies the object beside the text and
signs its hash into the record.
"""

from __future__ import annotations

from datetime import UTC, datetime

from activities.rules.language import mismatched_pages
from custody import ids
from custody.errors import Code, Quarantined
from custody.fields import Extraction
from custody.models import PageText
from custody.refs import RefKeys
from custody.state.rules import (
    FieldsPolicy,
    Verdict,
    configured_types,
    evaluate,
    get_policy,
    type_fields,
)
from custody.stores import ObjectStore


def work_fields_key(sha256: str, tenant: str | None, text_sha256: str) -> str:
    """Scratch: written by the check, cleared once the document concludes."""
    return f"{ids.work_prefix(sha256, tenant)}fields-{text_sha256[:16]}.json"


def fields_key(sha256: str, tenant: str | None, text_sha256: str) -> str:
    """Published: beside the text, its hash signed into the record."""
    return f"results/{ids.scope(tenant)}/{sha256}/fields-{text_sha256[:16]}.json"


class FieldsOutcome:
    """What the check adds to its result: a reference and names, no values."""

    def __init__(self, document_type: str, key: str, sig: str | None, verdict: Verdict) -> None:
        self.document_type, self.key, self.sig, self.verdict = document_type, key, sig, verdict


class FieldsCheck:
    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._refs = RefKeys.for_store(store)

    def policy(self, tenant: str | None) -> FieldsPolicy:
        return get_policy(self._store, tenant)

    def language(self, pages: list[PageText], policy: FieldsPolicy, *, hold: bool = True) -> bool:
        """True when every page is in an expected language; quarantines if the policy says so
        (and ``hold``: a document that waits in review is not quarantined for it)."""
        wrong = mismatched_pages(pages, policy.languages)
        if wrong and hold and policy.on_language == "quarantine":
            listed = ",".join(str(p + 1) for p in wrong)
            raise Quarantined(
                Code.LANGUAGE_MISMATCH, f"pages {listed} not in the expected languages"
            )
        return not wrong

    def fields(
        self,
        pages: list[PageText],
        *,
        sha256: str,
        tenant: str | None,
        text_sha256: str,
        declared: str | None,
        policy: FieldsPolicy,
        hold: bool = True,
    ) -> FieldsOutcome:
        from activities.fields import extract  # the readers load only where fields are read

        if declared is not None and declared not in type_fields(policy):
            # Named at submission, no longer configured: a person decides what it is.
            raise Quarantined(Code.TYPE_NOT_CONFIGURED, "the declared type is not configured")
        extraction = extract(
            pages,
            declared=declared,
            expected=policy.expected_types,
            configured=configured_types(policy),
        )
        key = work_fields_key(sha256, tenant, text_sha256)
        self._store.create(key, extraction.model_dump_json().encode())
        # A retry judges what an earlier attempt stored: the sealed object is the fact.
        stored = Extraction.model_validate_json(self._store.get(key))
        verdict = evaluate(stored, policy, datetime.now(UTC).date())
        if verdict.code is not None and hold:
            raise Quarantined(verdict.code, "fields: " + ",".join(verdict.review))
        sig = self._refs.sign(key, tenant, sha256)
        return FieldsOutcome(stored.classification.type, key, sig, verdict)
