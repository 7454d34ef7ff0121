"""An RFC 9162 Merkle tree over the ledger, and C2SP signed checkpoints of it.

The hashing is RFC 9162 §2.1: a leaf is SHA-256(0x00 || entry), an inner node
SHA-256(0x01 || left || right), the empty tree SHA-256(""); a tree of n > 1
leaves splits at the largest power of two below n. Inclusion proofs show that an
entry is leaf i of a tree with a given root; consistency proofs that a tree of
size m is a prefix of a tree of size n, so a log can only grow.

A checkpoint is a C2SP ``tlog-checkpoint`` in a C2SP ``signed-note``: the body
is three lines (origin, tree size, base64 root) and each signature line is
``— <key name> base64(key hash[4] || Ed25519 signature)``, with the key hash
SHA-256(name || 0x0A || 0x01 || public key)[:4].

Pure and light (hashlib, base64, ``cryptography``): verifiers and the bundle
verifier's copy follow the same algorithms.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

EMPTY_ROOT = hashlib.sha256(b"").digest()
_DASH = "\u2014"


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(leaves: list[bytes]) -> bytes:
    """MTH over leaf hashes (not entries): the tree head of ``len(leaves)`` leaves."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(root(leaves[:k]), root(leaves[k:]))


def inclusion_proof(leaves: list[bytes], index: int) -> list[bytes]:
    """PATH(index, leaves): the audit path of leaf ``index`` (RFC 9162 §2.1.3.1)."""
    if not 0 <= index < len(leaves):
        raise ValueError("leaf index outside the tree")
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*inclusion_proof(leaves[:k], index), root(leaves[k:])]
    return [*inclusion_proof(leaves[k:], index - k), root(leaves[:k])]


def verify_inclusion(index: int, size: int, leaf: bytes, proof: list[bytes], head: bytes) -> bool:
    """RFC 9162 §2.1.3.2: whether ``leaf`` is leaf ``index`` of the tree ``head`` of ``size``."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == head


def consistency_proof(leaves: list[bytes], old_size: int) -> list[bytes]:
    """PROOF(old_size, leaves): the tree of ``old_size`` is a prefix (RFC 9162 §2.1.4.1)."""
    if not 0 <= old_size <= len(leaves):
        raise ValueError("old size outside the tree")
    return [] if old_size == 0 else _subproof(old_size, leaves, True)


def _subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), root(leaves[:k])]


def verify_consistency(
    old_size: int, new_size: int, old_head: bytes, new_head: bytes, proof: list[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2: whether the tree ``old_head`` is a prefix of ``new_head``."""
    if not 0 <= old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_head == new_head
    if old_size == 0:
        return not proof  # the empty tree is a prefix of every tree
    if old_size & (old_size - 1) == 0:  # a power of two: the old head is a node of the proof
        proof = [old_head, *proof]
    if not proof:
        return False
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_head and sr == new_head


def frontier_push(frontier: list[bytes], size: int, leaf: bytes) -> list[bytes]:
    """The perfect-subtree hashes of a tree of ``size`` + 1, from those of ``size``.

    A tree of n leaves is the perfect subtrees of n's binary digits, left to
    right; keeping only their roots lets an appender sign the next head from the
    previous checkpoint, without reading the whole log.
    """
    out = [*frontier, leaf]
    while size & 1:  # each trailing one bit merges two equal subtrees
        right = out.pop()
        out[-1] = node_hash(out[-1], right)
        size >>= 1
    return out


def frontier_root(frontier: list[bytes]) -> bytes:
    if not frontier:
        return EMPTY_ROOT
    head = frontier[-1]
    for left in reversed(frontier[:-1]):
        head = node_hash(left, head)
    return head


@dataclass(frozen=True)
class Note:
    """A checkpoint's body: which log, how many leaves, and their tree head."""

    origin: str
    size: int
    root: bytes

    def text(self) -> bytes:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n".encode()


def _key_hash(name: str, public: Ed25519PublicKey) -> bytes:
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return hashlib.sha256(name.encode() + b"\n\x01" + raw).digest()[:4]


def sign_note(
    note: Note, name: str, public: Ed25519PublicKey, sign: Callable[[bytes], bytes]
) -> bytes:
    """The signed note: body, a blank line, one signature line; ``sign`` is the key's Ed25519."""
    sig = _key_hash(name, public) + sign(note.text())
    return note.text() + f"\n{_DASH} {name} {base64.b64encode(sig).decode()}\n".encode()


def open_note(signed: bytes, trusted: dict[str, Ed25519PublicKey]) -> Note | None:
    """The checkpoint, if a signature line verifies under a trusted (name -> key); else None."""
    try:
        body, _, sigs = signed.decode().partition("\n\n")
        origin, size, head = body.split("\n")
        note = Note(origin, int(size), base64.b64decode(head, validate=True))
    except (UnicodeDecodeError, ValueError):
        return None
    if note.text() != (body + "\n").encode() or note.size < 0 or len(note.root) != 32:
        return None
    for line in sigs.splitlines():
        dash, _, rest = line.partition(" ")
        name, _, blob = rest.partition(" ")
        if dash != _DASH or name not in trusted:
            continue
        try:
            raw = base64.b64decode(blob, validate=True)
            if raw[:4] == _key_hash(name, trusted[name]):
                trusted[name].verify(raw[4:], note.text())
                return note
        except (ValueError, InvalidSignature):
            continue
    return None
