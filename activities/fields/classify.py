"""Which kind of document this is: referral, receipt, a configured type or a generic form.

The submitter's word wins (``declared``); a tenant expecting a single type
gets that type (``policy``); otherwise each type scores the share of its cue
words found on the pages, receipts also their money amounts (no more of them
than their cue words), and the best
score among the expected types wins (``classified``). A configured type
(``custody.doctypes``) scores its own cue words as a referral scores its. A
page with no cues at all is a generic form: key-value pairs are read from
anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from activities.fields.anchors import fold
from activities.fields.layout import Line
from activities.fields.normalise import amounts_in
from custody.doctypes import TypeSpec
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
            # Clinical and consent words of letters from other hands (issue #27, round 3).
            "consultant",
            "referrer",
            "nurse",
            "centre",
            "healthcare",
            "allergies",
            "medication",
            "diagnosed",
            "outpatients",
            "permission",
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
#: A specific type's score that wins over a form's, whatever the form's.
_SPECIFIC = 0.5


def classify(
    lines: Sequence[Line],
    *,
    declared: str | None,
    expected: Sequence[str],
    configured: Mapping[str, TypeSpec] | None = None,
) -> Classification:
    scores = _scores(lines, configured or {})
    if declared is not None:
        return Classification(type=declared, how="declared", confidence=1.0, scores=scores)
    if len(set(expected)) == 1:
        return Classification(type=expected[0], how="policy", confidence=1.0, scores=scores)
    allowed = list(expected) or list(scores)
    ranked = sorted(allowed, key=lambda t: -scores.get(t, 0.0))
    # A form is what is left: a referral faxed or e-mailed prints a form's header words
    # ("To:", "From:", "Subject:", "Date:") beside its own, and scored as a form it lost
    # every referral field. Half a specific type's cues outweigh them (on the 51 FUNSD
    # forms of the corpus none has more than 2 of a referral's 6).
    specific = [t for t in ranked if t != DocType.FORM.value and scores.get(t, 0.0) >= _SPECIFIC]
    if specific and ranked[0] == DocType.FORM.value:
        ranked.remove(specific[0])
        ranked.insert(0, specific[0])
    best = ranked[0]
    runner = scores.get(ranked[1], 0.0) if len(ranked) > 1 else 0.0
    margin = scores.get(best, 0.0) - runner
    # Without a single cue the type is a default, not a finding.
    sure = scores.get(best, 0.0) > _FORM_FLOOR
    confidence = round(min(1.0, max(0.0, 0.5 + margin)), 4) if sure else 0.5
    return Classification(type=best, how="classified", confidence=confidence, scores=scores)


def _scores(lines: Sequence[Line], configured: Mapping[str, TypeSpec]) -> dict[str, float]:
    words = {fold(t.text) for line in lines for t in line.tokens}
    text = " ".join(t.text for line in lines for t in line.tokens)
    found = {kind: len(words & {fold(cue) for cue in cues}) for kind, cues in CUES.items()}
    # Figures count for a receipt only as far as its words do: a form's table of
    # "3.60"s is no receipt (on forms_dev up to 70 amounts beside at most 3 receipt
    # words; every SROIE receipt in the corpus has 5 or more).
    amounts = min(len(amounts_in(text)), found[DocType.RECEIPT], _FULL)
    scores = {
        DocType.REFERRAL.value: found[DocType.REFERRAL] / _FULL,
        DocType.RECEIPT.value: (found[DocType.RECEIPT] + amounts) / (2 * _FULL),
        DocType.FORM.value: _FORM_FLOOR + found[DocType.FORM] / (2 * _FULL),
    }
    for name, spec in configured.items():
        scores[name] = len(words & {fold(cue) for cue in spec.cue_words()}) / _FULL
    return {kind: round(min(1.0, score), 4) for kind, score in scores.items()}
