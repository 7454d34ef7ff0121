"""Canonical JSON (RFC 8785, JCS): one byte string per value, so hashes and signatures hold.

Object members sorted by the UTF-16 code units of their names, no whitespace,
strings with only the escapes JSON requires (UTF-8 otherwise), numbers as
ECMAScript prints an IEEE 754 double. NaN and Infinity have no JSON form, and
an integer beyond 2**53 no exact double: both raise ``CANONICAL_INVALID``
rather than being written as something else (``json.dumps`` writes ``NaN``).

Verification checks stored bytes with :func:`is_canonical`: a record whose
bytes are not exactly the canonical form of what they parse to was written by
something other than Custody. A signed envelope's signature is checked over
its signed member's stored bytes, cut out by :func:`signed_member`.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from custody.errors import CanonicalError

_MAX_EXACT = 2**53


def canonical_json(value: BaseModel | dict[str, Any] | list[Any]) -> bytes:
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    try:
        return "".join(_encode(data)).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not a Unicode string
        raise CanonicalError(detail="a string is not valid Unicode") from None


def is_canonical(data: bytes) -> bool:
    """Whether ``data`` is exactly the canonical form of the JSON it parses to."""
    try:
        return canonical_json(loads(data)) == data
    except ValueError:  # unparsable, duplicate names, NaN: never canonical
        return False


def signed_member(raw: bytes, name: str) -> bytes | str:
    """The bytes of member ``name`` exactly as stored in ``raw``, or why they cannot be had.

    A signed envelope (``{"record": ..., "signature": ...}``) is written
    canonically, so its signed member sorts first and is cut out of the stored
    bytes here rather than re-serialised from what they parse to; a member
    anywhere else was not written by Custody. The reason names only ``name``.
    """
    head = f'{{"{name}":'
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"{name} is not UTF-8"
    if not text.startswith(head):
        return f"{name} member not first (not written by Custody)"
    try:
        _, end = json.JSONDecoder().raw_decode(text, len(head))
    except ValueError:
        return f"{name} member unreadable"
    # Decoding valid UTF-8 and encoding it again gives back the very same bytes.
    return text[len(head) : end].encode("utf-8")


def loads(data: bytes) -> Any:
    """Parse strictly: no NaN/Infinity constants, no duplicate member names."""
    return json.loads(data, parse_constant=_refuse, object_pairs_hook=_unique)


def _refuse(name: str) -> Any:
    raise CanonicalError(detail=f"{name} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise CanonicalError(detail="duplicate member name")
    return found


def _encode(value: Any) -> list[str]:
    out: list[str] = []
    _write(value, out)
    return out


def _write(value: Any, out: list[str]) -> None:
    if value is None or value is True or value is False:
        out.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int):
        if abs(value) > _MAX_EXACT:
            raise CanonicalError(detail="an integer beyond 2**53 has no exact JSON number")
        out.append(str(value))
    elif isinstance(value, float):
        out.append(number(value))
    elif isinstance(value, dict):
        _write_object(value, out)
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _write(item, out)
        out.append("]")
    else:
        raise CanonicalError(detail=f"{type(value).__name__} is not a JSON value")


def _write_object(value: dict[Any, Any], out: list[str]) -> None:
    if not all(isinstance(k, str) for k in value):
        raise CanonicalError(detail="an object member name is not a string")
    out.append("{")
    # UTF-16 code units, as RFC 8785 section 3.2.3 orders them (not code points).
    for i, name in enumerate(sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))):
        out.append(("," if i else "") + json.dumps(name, ensure_ascii=False) + ":")
        _write(value[name], out)
    out.append("}")


def number(x: float) -> str:
    """An IEEE 754 double as ECMAScript's Number.prototype.toString prints it."""
    if not math.isfinite(x):
        raise CanonicalError(detail=f"{x} is not a JSON number")
    if x == 0:
        return "0"  # -0 too
    # repr is the shortest string that reads back as x: the digits ECMAScript uses.
    sign, digits, exp = Decimal(repr(x)).normalize().as_tuple()
    s = "".join(map(str, digits))
    k, n = len(s), int(exp) + len(s)  # x = 0.s * 10**n
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{s[:n]}.{s[n:]}"
    elif -6 < n <= 0:
        text = f"0.{'0' * -n}{s}"
    else:
        e = n - 1
        mantissa = s if k == 1 else f"{s[0]}.{s[1:]}"
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return f"-{text}" if sign else text
