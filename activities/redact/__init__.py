"""Redacted views: a derived, separately signed copy of a published document, text removed.

allow    The allow-list sweep: every word bearing digits or capitalised and not known safe goes.
check    The leak check a redacted view must pass before it is stored or released.
core     One document's redacted view from its page images and recognised words, checked.
detect   Detectors: participant IDs, MRNs, dates of birth and titled names in OCR words.
lines    OCR words as rectangles grouped into lines: what the detectors read.
paint    Removing, not covering: painted page images and a PDF built afresh from them.
plan     The redaction plan: which words go, the boxes painted over them, and why.
policy   What a redacted view removes: named fields and detected identifiers.
scan     The check that does not trust the plan: every detector re-run on what the view shows.
release  A release under a ``view: redacted`` policy: each document's redacted view in its packet.
slots    Names where names stand: after a title, a person's label, a sign-off, before credentials.
service  Make, sign and store a published document's redacted view, once per policy.
view     The redacted view's signed record: what was removed from which evidence record, and by
         whom.
vocabulary  The words a view may keep capitalised: frequent English non-names and a form's words.
"""

__all__ = [
    "allow",
    "check",
    "core",
    "detect",
    "lines",
    "paint",
    "plan",
    "policy",
    "release",
    "scan",
    "service",
    "slots",
    "view",
    "vocabulary",
]
