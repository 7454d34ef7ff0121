"""Which kind of document this is: referral, receipt or generic form, from its words.

The submitter's word wins (``declared``); a tenant expecting a single type
gets that type (``policy``); otherwise each type scores the share of its cue
words found on the pages, receipts also their money amounts, and the best
score among the expected types wins (``classified``). A page with no cues at
all is a generic form: key-value pairs are read from anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.fields.anchors import fold
from activities.fields.layout import Line
from activities.fields.normalise import amounts_in
from custody.fields import Classification, DocType

CUES: dict[DocType, frozenset[str]] = {
    DocType.REFERRAL: frozenset(
        [
            "referral",
            "referred",
            "referring",
            "participant",
            "consent",
            "clinician",
            "physician",
            "clinic",
            "practice",
            "reason",
            "dob",
            "mrn",
            "patient",
            "outpatient",
            "appointment",
            # Words of clinical letters and forms that name no field (issue #27).
            "referrals",
            "refer",
            "nhs",
            "gp",
            "surgery",
            "diagnosis",
            "clinical",
            "symptoms",
            "practitioner",
            "doctor",
            "hospital",
            "treatment",
            "trial",
            "study",
            "born",
            "medical",
            "concern",
        ]
    ),
    DocType.RECEIPT: frozenset(
        [
            "total",
            "subtotal",
            "cash",
            "change",
            "gst",
            "tax",
            "receipt",
            "invoice",
            "qty",
            "amount",
            "rm",
            "sdn",
            "bhd",
            "tel",
            "price",
            "item",
            "rounding",
            "payment",
            "thank",
        ]
    ),
    DocType.FORM: frozenset(
        [
            "to",
            "from",
            "date",
            "subject",
            "fax",
            "pages",
            "re",
            "cc",
            "name",
            "signature",
            "telephone",
            "phone",
            "number",
            "company",
            "department",
            "approved",
        ]
    ),
}
#: Cue words needed for a type to reach full score.
_FULL = 6
#: A form is what is left: it scores this much without any cue.
_FORM_FLOOR = 0.25


def classify(
    lines: Sequence[Line], *, declared: DocType | None, expected: Sequence[DocType]
) -> Classification:
    scores = _scores(lines)
    if declared is not None:
        return Classification(type=declared, how="declared", confidence=1.0, scores=scores)
    if len(set(expected)) == 1:
        return Classification(type=expected[0], how="policy", confidence=1.0, scores=scores)
    allowed = list(expected) or list(DocType)
    ranked = sorted(allowed, key=lambda t: -scores[t.value])
    best = ranked[0]
    runner = scores[ranked[1].value] if len(ranked) > 1 else 0.0
    margin = scores[best.value] - runner
    # Without a single cue the type is a default, not a finding.
    confidence = round(min(1.0, 0.5 + margin), 4) if scores[best.value] > _FORM_FLOOR else 0.5
    return Classification(type=best, how="classified", confidence=confidence, scores=scores)


def _scores(lines: Sequence[Line]) -> dict[str, float]:
    words = {fold(t.text) for line in lines for t in line.tokens}
    text = " ".join(t.text for line in lines for t in line.tokens)
    found = {kind: len(words & {fold(cue) for cue in cues}) for kind, cues in CUES.items()}
    amounts = min(len(amounts_in(text)), _FULL)
    scores = {
        DocType.REFERRAL: found[DocType.REFERRAL] / _FULL,
        DocType.RECEIPT: (found[DocType.RECEIPT] + amounts) / (2 * _FULL),
        DocType.FORM: _FORM_FLOOR + found[DocType.FORM] / (2 * _FULL),
    }
    return {kind.value: round(min(1.0, score), 4) for kind, score in scores.items()}
