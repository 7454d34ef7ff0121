"""What verification answers: named checks, each passed or failed, per subject.

A check's ``name`` is a contract (``record.signature``, ``packet.hash``): tests,
runbooks and the ledger's ``verified`` events name failures by it. ``detail``
holds only hashes, keys, sequence numbers and codes, never document content.
"""

from __future__ import annotations

from pydantic import BaseModel


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class Report(BaseModel):
    subject: str
    ok: bool
    checks: list[Check]
    #: Which keys the signatures were checked against: ``pinned`` (configuration or
    #: ``--trust``) or ``local-keyring`` (the development default); None where no
    #: signature is checked.
    trust: str | None = None
    #: An incremental ``audit verify`` (``--state-file``): the tree size it proved the
    #: log grew from, and to; None for everything else.
    from_size: int | None = None
    to_size: int | None = None


def report(subject: str, checks: list[Check], trust: str | None = None) -> Report:
    return Report(subject=subject, ok=all(c.ok for c in checks), checks=checks, trust=trust)


def failed(name: str, detail: str) -> Check:
    return Check(name=name, ok=False, detail=detail)


def checked(name: str, problems: list[str], passed: str = "") -> Check:
    """One check from a list of problems: ok when there are none."""
    return Check(name=name, ok=not problems, detail="; ".join(problems[:5]) or passed)
