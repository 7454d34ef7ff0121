"""``signed_member`` cuts a signed envelope's member out of its stored bytes, byte for byte."""

from __future__ import annotations

from custody.canonical import canonical_json, signed_member


def test_canonical_member_is_the_stored_substring_even_when_not_ascii() -> None:
    """The record member comes back as the exact stored bytes, multi-byte UTF-8 included."""
    raw = canonical_json({"record": {"name": "Zoë 北京", "n": 1.5}, "signature": {"kid": "k"}})
    member = signed_member(raw, "record")
    assert member == canonical_json({"name": "Zoë 北京", "n": 1.5})
    assert isinstance(member, bytes) and raw.startswith(b'{"record":' + member + b',"signature"')


def test_canonical_member_keeps_the_stored_form_instead_of_normalising_it() -> None:
    """Whitespace, order and number forms inside the member survive, so a signature sees them."""
    raw = b'{"record":{"n": 1.0,"a":2},"signature":{}}'
    assert signed_member(raw, "record") == b'{"n": 1.0,"a":2}'


def test_canonical_member_says_why_naming_only_the_member() -> None:
    """Each reason names the member, never its content, in the words verification reports."""
    assert signed_member(b'{"signature":{},"record":{}}', "record") == (
        "record member not first (not written by Custody)"
    )
    for unreadable in (b'{"record": {}}', b'{"record":{"a":'):  # a space is not Custody's
        assert signed_member(unreadable, "record") == "record member unreadable"
    assert signed_member(b'{"record":"\xff"}', "record") == "record is not UTF-8"
