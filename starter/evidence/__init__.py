"""The auditor's read side: verification, evidence bundles, trust anchors and retention.

Nothing on the worker side imports this room; it reads what the workers wrote.

bundle           Evidence for compliance staff: verify, quarantine decisions, search (bundles:
                 export.py).
deletions        The two-person rule for evidence deletions: a pending signed request, then a
                 second person.
disclosures      The accounting of disclosures: one patient's every disclosure, via the field index.
export           Evidence bundles: a zip an auditor verifies offline with verify_bundle.py alone.
retention        Evidence retention: policies, an owner's signed approval, deletion that leaves
                 evidence.
retention_apply  ``custody retention apply``: delete approved evidence whose period has run out.
trust            The trust anchor: which signing keys verification accepts, decided outside the
                 store.
verify_bundle    Verify a Custody evidence bundle with nothing but Python and ``cryptography``.
"""

__all__ = [
    "bundle",
    "deletions",
    "disclosures",
    "export",
    "retention",
    "retention_apply",
    "trust",
    "verify_bundle",
]
