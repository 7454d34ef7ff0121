"""The recogniser's per-column best character and its score, as a two-node ONNX model.

PP-OCRv6's recogniser answers, for every column of every line, a score for
each of its 18,710 characters: 3 MB for one 320 px line, gigabytes for a
large batch. CTC decoding needs only each column's best character and that
score. On a GPU those are taken there (``ArgMax`` and ``ReduceMax`` run on the
recogniser's output where it lies, bound by IOBinding), and only two small
arrays cross to the host. On a CPU numpy takes them; the results are the same
(first index on ties in both).

The model is written here as protobuf bytes (ONNX's ``ModelProto``, opset 13)
rather than shipped as a file or built with the ``onnx`` package: four small
messages, no new dependency, and nothing to review beyond this module.
"""

from __future__ import annotations

#: Input and output names of the head.
SCORES, INDEX, PROB = "scores", "index", "prob"

_FLOAT, _INT64 = 1, 7  # TensorProto.DataType
_ATTR_INT, _ATTR_INTS = 2, 7  # AttributeProto.AttributeType
_OPSET = 13
_IR_VERSION = 7


def head_model() -> bytes:
    """``scores [N, T, C] -> index [N, T] (int64), prob [N, T] (float)`` over the last axis."""
    argmax = _node("ArgMax", SCORES, INDEX, _int_attr("axis", 2) + _int_attr("keepdims", 0))
    top = _node("ReduceMax", SCORES, PROB, _ints_attr("axes", [2]) + _int_attr("keepdims", 0))
    graph = (
        _field(1, argmax)
        + _field(1, top)
        + _field(2, b"ctc_head")
        + _field(11, _value(SCORES, _FLOAT, ["n", "t", "c"]))
        + _field(12, _value(INDEX, _INT64, ["n", "t"]))
        + _field(12, _value(PROB, _FLOAT, ["n", "t"]))
    )
    opset = _field(1, b"") + _varint_field(2, _OPSET)
    return (
        _varint_field(1, _IR_VERSION) + _field(2, b"custody") + _field(7, graph) + _field(8, opset)
    )


def _node(op: str, source: str, target: str, attributes: bytes) -> bytes:
    return (
        _field(1, source.encode())
        + _field(2, target.encode())
        + _field(3, f"{op}_{target}".encode())
        + _field(4, op.encode())
        + attributes
    )


def _int_attr(name: str, value: int) -> bytes:
    attr = _field(1, name.encode()) + _varint_field(3, value) + _varint_field(20, _ATTR_INT)
    return _field(5, attr)


def _ints_attr(name: str, values: list[int]) -> bytes:
    attr = _field(1, name.encode())
    for value in values:
        attr += _varint_field(8, value)
    return _field(5, attr + _varint_field(20, _ATTR_INTS))


def _value(name: str, elem_type: int, dims: list[str]) -> bytes:
    """A ValueInfoProto: a tensor of ``elem_type`` with named (symbolic) dimensions."""
    shape = b"".join(_field(1, _field(2, d.encode())) for d in dims)
    tensor = _varint_field(1, elem_type) + _field(2, shape)
    return _field(1, name.encode()) + _field(2, _field(1, tensor))


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)
