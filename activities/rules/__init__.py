"""Application rules in the output check: fields read and judged, the language check, consent.

check     Fields and rules inside the output check: read, seal, judge; only names leave.
consent   Consent on release: a policy with ``require_consent`` lets no referral out without it.
language  The output schema's language check: each page in a language the policy expects.
"""

__all__ = [
    "check",
    "consent",
    "language",
]
