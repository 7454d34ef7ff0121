"""RFC 8785 (JCS) canonical JSON, checked against the RFC's own examples."""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime

import pytest

from custody import egress as eg
from custody.canonical import canonical_json, is_canonical, number
from custody.errors import CanonicalError, Code
from custody.models import DocState, Transition
from custody.release_steps import DeliverInput

# RFC 8785 Appendix B: IEEE 754 bit patterns and the string ECMAScript prints.
NUMBERS = {
    0x0000000000000000: "0",
    0x8000000000000000: "0",
    0x0000000000000001: "5e-324",
    0x8000000000000001: "-5e-324",
    0x7FEFFFFFFFFFFFFF: "1.7976931348623157e+308",
    0xFFEFFFFFFFFFFFFF: "-1.7976931348623157e+308",
    0x4340000000000000: "9007199254740992",
    0xC340000000000000: "-9007199254740992",
    0x4430000000000000: "295147905179352830000",
    0x44B52D02C7E14AF5: "9.999999999999997e+22",
    0x44B52D02C7E14AF6: "1e+23",
    0x44B52D02C7E14AF7: "1.0000000000000001e+23",
    0x444B1AE4D6E2EF4E: "999999999999999700000",
    0x444B1AE4D6E2EF4F: "999999999999999900000",
    0x444B1AE4D6E2EF50: "1e+21",
    0x3EB0C6F7A0B5ED8C: "9.999999999999997e-7",
    0x3EB0C6F7A0B5ED8D: "0.000001",
    0x41B3DE4355555553: "333333333.3333332",
    0x41B3DE4355555554: "333333333.33333325",
    0x41B3DE4355555555: "333333333.3333333",
    0x41B3DE4355555556: "333333333.3333334",
    0x41B3DE4355555557: "333333333.33333343",
    0x43143FF3C1CB0959: "1424953923781206.2",
}


@pytest.mark.parametrize("bits", list(NUMBERS))
def test_canonical_number_matches_rfc8785_appendix_b(bits: int) -> None:
    """Each double of the RFC's table prints as ECMAScript prints it."""
    value = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    assert number(value) == NUMBERS[bits]


def test_canonical_json_matches_rfc8785_section_3_2_2_example() -> None:
    """The RFC's worked example: numbers, escapes and literals, members sorted."""
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(source)) == expected.encode()


def test_canonical_json_sorts_members_by_utf16_code_units() -> None:
    """RFC 8785 3.2.3: an emoji (surrogate D83D) sorts before U+FB33, unlike by code point."""
    names = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    out = canonical_json(dict.fromkeys(names, 0)).decode()
    order = [json.loads("{" + part + "}") for part in out[1:-1].split(",")]
    assert [next(iter(o)) for o in order] == [
        "\r",
        "1",
        "\u0080",
        "\u00f6",
        "\u20ac",
        "\U0001f600",
        "\ufb33",
    ]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 2**53 + 1])
def test_canonical_json_refuses_what_has_no_exact_json_number(bad: float) -> None:
    """NaN, Infinity and an integer beyond 2**53 raise CANONICAL_INVALID, never ``NaN``."""
    with pytest.raises(CanonicalError) as err:
        canonical_json({"x": bad})
    assert err.value.code is Code.CANONICAL_INVALID


def test_canonical_is_canonical_rejects_any_other_spelling() -> None:
    """Whitespace, member order, a duplicate name or ``NaN`` in stored bytes is not canonical."""
    good = canonical_json({"a": 1, "b": [1.5, "x"]})
    assert is_canonical(good)
    for other in (
        b'{"a": 1,"b":[1.5,"x"]}',
        b'{"b":[1.5,"x"],"a":1}',
        b'{"a":1,"a":1}',
        b'{"a":NaN}',
    ):
        assert not is_canonical(other), other


def test_omit_none_leaves_an_unset_later_field_out_and_keeps_a_set_one() -> None:
    """A field added after records were signed (a transition's ``by``, a delivery's
    ``credentials``) is left out of the JSON while None, and written once it is set."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert canonical_json(Transition(state=DocState.ACCEPTED, at=at)) == (
        b'{"at":"2026-01-01T00:00:00Z","state":"accepted"}'
    )
    assert Transition(state=DocState.ACCEPTED, at=at, by="io@host").model_dump()["by"] == "io@host"
    sent = {"release_id": "r", "tenant": None, "target": "t", "files": []}
    plain = DeliverInput(channel=eg.ChannelKind.S3, **sent).model_dump(mode="json")
    assert "credentials" not in plain and plain["target"] == "t"
    held = DeliverInput(channel=eg.ChannelKind.S3, credentials="env:KEY", **sent)
    assert held.model_dump()["credentials"] == "env:KEY"
