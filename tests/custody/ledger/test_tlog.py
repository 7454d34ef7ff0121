"""The Merkle tree and signed checkpoints of custody.ledger.tlog: known vectors, every size."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from custody.ledger import tlog

# The RFC 6962/9162 test leaves and tree heads used by Certificate Transparency
# implementations (transparency-dev/merkle testonly, Trillian).
VECTOR_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    bytes(range(0x50, 0x58)),
    bytes(range(0x60, 0x70)),
]
VECTOR_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
LEAF0_OF_8 = [
    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
]
SIZES = range(1, 41)


def _leaves(n: int) -> list[bytes]:
    return [tlog.leaf_hash(f"event {i}".encode()) for i in range(n)]


def test_tlog_roots_match_known_vectors() -> None:
    """Tree heads of the RFC test leaves, sizes 0 to 8, are the published ones."""
    hashes = [tlog.leaf_hash(x) for x in VECTOR_LEAVES]
    assert tlog.root([]).hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert [tlog.root(hashes[: n + 1]).hex() for n in range(8)] == VECTOR_ROOTS


def test_tlog_inclusion_proof_matches_known_vector() -> None:
    """The audit path of leaf 0 in the 8-leaf tree is the published one, and so is PROOF(1, 8)."""
    hashes = [tlog.leaf_hash(x) for x in VECTOR_LEAVES]
    assert [p.hex() for p in tlog.inclusion_proof(hashes, 0)] == LEAF0_OF_8
    assert [p.hex() for p in tlog.consistency_proof(hashes, 1)] == LEAF0_OF_8


def test_tlog_frontier_root_equals_tree_head_at_every_size() -> None:
    """The incremental frontier an appender keeps gives the same head as the full tree."""
    leaves = _leaves(max(SIZES))
    frontier: list[bytes] = []
    for size, leaf in enumerate(leaves):
        frontier = tlog.frontier_push(frontier, size, leaf)
        assert tlog.frontier_root(frontier) == tlog.root(leaves[: size + 1])


@pytest.mark.parametrize("n", SIZES)
def test_tlog_every_leaf_proves_inclusion(n: int) -> None:
    """Each leaf verifies at its index; not altered, moved, shortened or under another head."""
    leaves = _leaves(n)
    head = tlog.root(leaves)
    for i, leaf in enumerate(leaves):
        proof = tlog.inclusion_proof(leaves, i)
        assert tlog.verify_inclusion(i, n, leaf, proof, head)
        assert not tlog.verify_inclusion(i, n, tlog.leaf_hash(b"forged"), proof, head)
        assert not tlog.verify_inclusion(i, n, leaf, proof, tlog.root([*leaves, leaf]))
        if n > 1:
            assert not tlog.verify_inclusion((i + 1) % n, n, leaf, proof, head)
            assert not tlog.verify_inclusion(i, n, leaf, proof[:-1], head)


@pytest.mark.parametrize("n", SIZES)
def test_tlog_every_smaller_size_proves_consistency(n: int) -> None:
    """For every m <= n the old head is consistent with the new; a forged old head is not."""
    leaves = _leaves(n)
    new = tlog.root(leaves)
    for m in range(0, n + 1):
        old, proof = tlog.root(leaves[:m]), tlog.consistency_proof(leaves, m)
        assert tlog.verify_consistency(m, n, old, new, proof)
        if m > 0:
            assert not tlog.verify_consistency(m, n, tlog.leaf_hash(b"rewritten"), new, proof)
        if 0 < m < n:
            assert not tlog.verify_consistency(m, n, old, tlog.root(leaves[:-1]), proof)


def test_tlog_rewritten_history_is_not_consistent() -> None:
    """A log whose leaf 3 was replaced does not extend the checkpoint taken before."""
    leaves = _leaves(12)
    old = tlog.root(leaves[:7])
    rewritten = [*leaves[:3], tlog.leaf_hash(b"other"), *leaves[4:]]
    proof = tlog.consistency_proof(rewritten, 7)
    assert not tlog.verify_consistency(7, 12, old, tlog.root(rewritten), proof)


def test_tlog_signed_note_opens_only_with_its_key() -> None:
    """A checkpoint opens with the signer's key under its name, not with another key or body."""
    key, rogue = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    note = tlog.Note("custody.ledger/t", 5, tlog.root(_leaves(5)))
    signed = tlog.sign_note(note, "custody/k1", key.public_key(), key.sign)
    lines = signed.decode().split("\n")
    assert lines[:3] == ["custody.ledger/t", "5", lines[2]] and lines[3] == ""
    assert lines[4].startswith("\u2014 custody/k1 ")
    assert tlog.open_note(signed, {"custody/k1": key.public_key()}) == note
    assert tlog.open_note(signed, {"custody/k1": rogue.public_key()}) is None
    assert (
        tlog.open_note(signed.replace(b"\n5\n", b"\n4\n"), {"custody/k1": key.public_key()}) is None
    )
    assert tlog.open_note(b"garbage", {"custody/k1": key.public_key()}) is None
