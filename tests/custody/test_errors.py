"""The error rules of issue #19: one module holds every exception, every code is placed.

Exceptions are found with ``ast`` over the source, not by importing: a class is
an exception when a base is a builtin exception, a project class that is one
(followed transitively, by name), or a foreign class whose name ends in
``Error`` or ``Exception`` (``ApplicationError``, ``httpx.HTTPError``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.faults import coded
from custody import errors
from custody.errors import (
    CANCEL_CODES,
    DELIVERY_FINAL_CODES,
    EGRESS_REFUSE_CODES,
    NON_RETRYABLE_CODES,
    QUARANTINE_CODES,
    REJECT_CODES,
    REQUEST_CODES,
    TRANSIENT_CODES,
    Code,
    DeliveryFailed,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("custody", "workflows", "activities", "workers", "starter")
ERRORS = ROOT / "custody" / "errors.py"
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
CODE_SETS = {
    "REJECT": REJECT_CODES,
    "QUARANTINE": QUARANTINE_CODES,
    "TRANSIENT": TRANSIENT_CODES,
    "EGRESS_REFUSE": EGRESS_REFUSE_CODES,
    "DELIVERY_FINAL": DELIVERY_FINAL_CODES,
    "REQUEST": REQUEST_CODES,
    "CANCEL": CANCEL_CODES,
}
# Codes deliberately in no set. None today: CONFIGURATION, the one code that is
# neither an outcome nor only a request's answer, is TRANSIENT on purpose (an
# activity that meets it waits for an operator's fix). A code added here must
# say why it may be retried by default (it is then outside NON_RETRYABLE_CODES).
UNPLACED: frozenset[Code] = frozenset()

Found = tuple[str, ast.ClassDef]  # (where, class)


def _base_names(node: ast.ClassDef) -> set[str]:
    """``ValueError``, ``errors.CustodyError`` and ``Generic[T]`` as their last names."""
    names = set()
    for base in node.bases:
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            names.add(base.id)
        elif isinstance(base, ast.Attribute):
            names.add(base.attr)
    return names


def exception_classes(found: Iterable[Found]) -> list[Found]:
    """The classes among ``found`` that are exceptions, by their bases."""
    classes = list(found)
    known = set(BUILTIN_EXCEPTIONS)
    exceptions: list[Found] = []
    changed = True
    while changed:  # a fixed point: a subclass may come before its base
        changed = False
        for where, node in classes:
            bases = _base_names(node)
            foreign = any(b.endswith(("Error", "Exception")) for b in bases)
            if (bases & known or foreign) and (where, node) not in exceptions:
                exceptions.append((where, node))
                known.add(node.name)
                changed = True
    return exceptions


def _classes_in(source: str, where: str) -> Iterator[Found]:
    """Every class statement, nested ones included."""
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.ClassDef):
            yield where, node


def _project_classes() -> Iterator[Found]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield from _classes_in(path.read_text(), str(path.relative_to(ROOT)))


def test_errors_module_defines_every_exception_class() -> None:
    """No exception class is defined anywhere in the packages but custody/errors.py."""
    elsewhere = [
        f"{where}:{node.lineno} {node.name}"
        for where, node in exception_classes(_project_classes())
        if where != str(ERRORS.relative_to(ROOT))
    ]
    assert elsewhere == [], "move these into custody/errors.py"


def test_exception_scan_follows_bases_transitively() -> None:
    """The scan finds builtin, project and foreign exception bases, a subclass before its
    base included, and passes over enums and models."""
    source = """
class Late(Early): ...
class Early(LookupError): ...
class Foreign(temporalio.exceptions.ApplicationError): ...
class Model(BaseModel): ...
class Reason(StrEnum): ...
def build():
    class Nested(Late): ...
"""
    found = {node.name for _, node in exception_classes(_classes_in(source, "x.py"))}
    assert found == {"Early", "Late", "Foreign", "Nested"}


def test_exception_scan_sees_the_errors_tree() -> None:
    """The scan recognises errors.py's own classes, so an empty answer above means something."""
    source = ERRORS.read_text()
    found = {node.name for _, node in exception_classes(_classes_in(source, "errors.py"))}
    assert {"CustodyError", "MarkInvalid", "ReleaseStepFailed", "ObjectMissing"} <= found
    assert {"HelperError", "NotFound", "TenantExists"} <= found
    assert not {"Code", "AdmissionReason"} & found


def test_code_sets_place_every_code_exactly_once() -> None:
    """Each Code is in exactly one set (or deliberately in none), so none is retried by omission."""
    misplaced = {
        code.value: homes
        for code in Code
        if len(homes := [name for name, codes in CODE_SETS.items() if code in codes])
        != (0 if code in UNPLACED else 1)
    }
    assert misplaced == {}


def test_non_retryable_codes_are_every_final_outcome() -> None:
    """Outcome codes outside TRANSIENT are all non-retryable; transient ones never are."""
    outcomes = set(Code) - REQUEST_CODES - UNPLACED
    assert {c.value for c in outcomes - TRANSIENT_CODES} == NON_RETRYABLE_CODES
    assert NON_RETRYABLE_CODES.isdisjoint(c.value for c in TRANSIENT_CODES)


@pytest.mark.parametrize(
    ("code", "retryable"),
    [
        (Code.RECIPIENT_UNREACHABLE, True),
        (Code.RECIPIENT_REFUSED, False),
        (Code.DELIVERY_CONFLICT, False),
        (Code.CHANNEL_INVALID, False),
        (Code.PACKET_INVALID, False),
        (Code.SOURCE_ALTERED, False),
    ],
)
def test_delivery_failed_retries_as_its_activity_failure(code: Code, retryable: bool) -> None:
    """A channel's own retry loop and the activity's coded failure agree on retrying."""

    @coded(Code.INTERNAL)
    def deliver() -> None:
        raise DeliveryFailed(code, "release rel-1")

    with pytest.raises(ApplicationError) as failed:
        ActivityEnvironment().run(deliver)
    assert DeliveryFailed(code).retryable is retryable
    assert (failed.value.type, failed.value.non_retryable) == (code.value, not retryable)


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (errors.RenderFailed("page 2"), Code.RENDER_FAILED),
        (errors.SigningKeyMissing("no chain"), Code.SIGNING_KEY_MISSING),
        (errors.SigningKeyInvalid("signer.key readable"), Code.SIGNING_KEY_INVALID),
        (errors.SigningFailed("C2paError"), Code.SIGNING_FAILED),
        (errors.ProvenanceInvalid("does not parse"), Code.PROVENANCE_INVALID),
        (errors.UnsupportedMedia("text/html"), Code.UNSUPPORTED_TYPE),
        (errors.MarkInvalid("tag"), Code.MARK_INVALID),
    ],
)
def test_egress_errors_take_a_detail_and_keep_their_code(
    raised: errors.CustodyError, code: Code
) -> None:
    """Egress errors built from a detail alone carry their fixed, non-retryable code."""
    assert raised.code is code and str(raised) == f"{code.value}: {raised.detail}"
    assert code.value in NON_RETRYABLE_CODES


def test_release_step_failed_keeps_codes_and_maps_other_types_to_internal() -> None:
    """A failure type that is a code is kept; any other type becomes INTERNAL."""
    assert errors.ReleaseStepFailed("RECIPIENT_REFUSED").code is Code.RECIPIENT_REFUSED
    assert errors.ReleaseStepFailed("NotACode").code is Code.INTERNAL
