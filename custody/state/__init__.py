"""Security-relevant state: signed, chained, create-only versions, and what lives in them.

versions     the version chain itself (``append``, ``latest``)
signers      the keys that sign versions and those a reader trusts (``StateKeys``)
anchor       every version also an event of the system log, so a deleted newest shows
egress       release policies, recipients and egress events
tenant_policy  a tenant's own policy: its default purpose, two people for deletions
rules        a tenant's fields policy and its verdict on the fields read
ocr_config   the OCR configuration in force, its history, and the pin to roll back to
pools        live concurrency limits of the OCR and I/O pools
"""

from custody.state.signers import StateKeys, default_keys, state_keys
from custody.state.versions import append, latest

__all__ = ["StateKeys", "append", "default_keys", "latest", "state_keys"]
