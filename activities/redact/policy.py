"""What a redacted view removes: named fields and detected identifiers.

A redaction policy names fields of the document's extraction
(``custody.fields``) and detectors (``activities.redact.detect``). It is
pinned by the SHA-256 of its canonical JSON, which the signed view records,
so a view always says exactly which rules made it.

Built in: ``default`` removes the participant ID and the referring clinician
(a person's name) as read, and whatever the detectors find: participant IDs,
MRNs (by label and by prefix), dates of birth, people's names (beside a label,
after a title, or in prose by the given-name lexicon), phone numbers, email and
postal addresses, and organisations (a company suffix, a letterhead above an
address); and, by the allow-list sweeps (``sweeps``), every word bearing digits
and every capitalised word not known safe. A policy can also be a JSON file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from custody.canonical import canonical_json
from custody.egress import check_name
from custody.errors import Code, EgressRefused

Detector = Literal[
    "participant_id",
    "mrn",
    "date_of_birth",
    "person_name",
    "patient_name",
    "phone",
    "email",
    "address",
    "organisation",
]
DETECTORS: tuple[Detector, ...] = get_args(Detector)
#: The allow-list sweeps (``activities.redact.allow``): what is not known safe goes.
Sweep = Literal["digits", "proper_noun"]
SWEEPS: tuple[Sweep, ...] = get_args(Sweep)


class RedactionPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    #: Fields of the extraction to remove where they were read (their page and box).
    fields: tuple[str, ...] = ("participant_id", "clinician")
    detectors: tuple[Detector, ...] = DETECTORS
    #: Every further occurrence of a removed string on any page is removed too.
    sweep: bool = True
    #: Pixels added around each removed box, as a share of the word's height.
    padding: float = Field(default=0.2, ge=0.0, le=1.0)
    #: The allow-list sweeps run on the source's words and again in the check. On by
    #: default, and left out of the canonical form at the default, so a policy stored
    #: before them (which reads back with them on) keeps its pinned hash.
    sweeps: tuple[Sweep, ...] = SWEEPS

    @model_serializer(mode="wrap")
    def _omit_default_sweeps(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        sweeps = data.get("sweeps")
        if isinstance(sweeps, list | tuple) and tuple(sweeps) == SWEEPS:
            del data["sweeps"]
        return data

    def sha256(self) -> str:
        return hashlib.sha256(canonical_json(self)).hexdigest()


DEFAULT_REDACTION = RedactionPolicy(name="default")
BUILTIN_REDACTIONS = {DEFAULT_REDACTION.name: DEFAULT_REDACTION}


def load_redaction(spec: str) -> RedactionPolicy:
    """A built-in policy by name, or one read from a JSON file at ``spec``."""
    if spec in BUILTIN_REDACTIONS:
        return BUILTIN_REDACTIONS[spec]
    path = Path(spec)
    if not path.is_file():
        raise EgressRefused(Code.POLICY_UNKNOWN, "no such redaction policy (a name or a JSON file)")
    try:
        policy = RedactionPolicy.model_validate(json.loads(path.read_text()))
        check_name(policy.name, "redaction policy name")
    except (ValueError, ValidationError) as err:
        raise EgressRefused(
            Code.POLICY_INVALID, f"redaction policy: {type(err).__name__}"
        ) from None
    return policy
