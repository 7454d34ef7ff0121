"""The tiled log of custody.ledger.tiles and .edge: C2SP paths, every tree size, proofs from tiles.

Trees are grown in batches of uneven sizes through :class:`Edge`, written to a
real local store (superseded partial tiles deleted, as integration does), and
every root, inclusion and consistency proof read back from the tiles is
compared with custody.ledger.tlog's, which the RFC 9162 vectors pin
(tests/custody/ledger/test_tlog.py).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from custody.ledger import tlog
from custody.ledger.edge import Edge
from custody.ledger.tiles import (
    Tiles,
    Tree,
    bundle_key,
    decode_bundle,
    encode_bundle,
    index_path,
    tile_key,
    width_at,
)
from custody.stores.local import LocalStore

PREFIX = "ledger/t/"


def _grow(store: LocalStore, entries: list[bytes], seed: int = 0) -> Edge:
    """Integrate ``entries`` in random batches, storing each batch's writes and deletes."""
    rng, edge, done = random.Random(seed), Edge(PREFIX), 0
    sizes = [1, 2, 5, 31, 255, 256, 300] if len(entries) < 5000 else [1, 7, 300, 2000, 5000]
    while done < len(entries):
        batch = entries[done : done + rng.choice(sizes)]
        writes = edge.extend(batch)
        for key, data in writes.create.items():
            assert store.create(key, data), key  # never rewritten
        for key in writes.delete:
            store.delete(key)
        done += len(batch)
    return edge


def _entries(n: int) -> list[bytes]:
    return [f"event {i}".encode() for i in range(n)]


def _heads(leaves: list[bytes]) -> list[bytes]:
    """heads[n]: the tree head of the first n leaves, by custody.ledger.tlog's frontier."""
    found, frontier = [tlog.EMPTY_ROOT], []
    for size, leaf in enumerate(leaves):
        frontier = tlog.frontier_push(frontier, size, leaf)
        found.append(tlog.frontier_root(frontier))
    return found


def test_tiles_paths_follow_c2sp() -> None:
    """Index groups of three digits, 'x' before all but the last; partial tiles end .p/W."""
    assert index_path(0) == "000" and index_path(1234067) == "x001/x234/067"
    assert tile_key(PREFIX, 1, 1234067) == "ledger/t/tile/1/x001/x234/067"
    assert tile_key(PREFIX, 0, 3, 17) == "ledger/t/tile/0/003.p/17"
    assert bundle_key(PREFIX, 5, 255) == "ledger/t/tile/entries/005.p/255"
    assert [width_at(70000, 0, i) for i in (0, 273, 274)] == [256, 112, 0]
    assert width_at(70000, 1, 1) == 17 and width_at(70000, 2, 0) == 1


def test_tiles_bundle_round_trips_and_refuses_what_it_cannot_hold() -> None:
    entries = [b"", b"a", bytes(range(256)) * 3]
    assert decode_bundle(encode_bundle(entries)) == entries
    with pytest.raises(ValueError):
        encode_bundle([b"x" * 65536])
    with pytest.raises(ValueError):
        decode_bundle(encode_bundle(entries)[:-1])


def test_tiles_every_size_has_the_rfc9162_root_and_proofs(tmp_path: Path) -> None:
    """Sizes 1..600 (three tile boundaries): roots, every inclusion, consistency from many."""
    entries = _entries(600)
    leaves = [tlog.leaf_hash(e) for e in entries]
    store, heads = LocalStore(tmp_path), _heads(leaves)
    edge = _grow(store, entries)
    assert edge.root() == tlog.root(leaves) == heads[600]
    tree = Tree(Tiles(store, PREFIX), 600)
    for size in range(1, 601):
        head = heads[size]
        assert tree.root(size) == head, size
        index = (size * 7) % size
        proof = tree.inclusion(index, size)
        assert proof == tlog.inclusion_proof(leaves[:size], index)
        assert tlog.verify_inclusion(index, size, leaves[index], proof, head)
        for old in {0, 1, size // 3, size - 1, size}:
            proof = tree.consistency(old, size)
            assert tlog.verify_consistency(old, size, heads[old], head, proof), (old, size)
    for size, old in ((600, 1), (600, 255), (513, 256), (300, 299)):
        assert tree.consistency(old, size) == tlog.consistency_proof(leaves[:size], old)
    assert [tree.entry(i) for i in (0, 255, 256, 599)] == [entries[i] for i in (0, 255, 256, 599)]


def test_tiles_proof_reads_o_log_n_objects(tmp_path: Path) -> None:
    """In a tree of 70,000 leaves (three tile levels) a proof reads a handful of tiles."""
    entries = _entries(70_000)
    leaves = [tlog.leaf_hash(e) for e in entries]
    store, heads = LocalStore(tmp_path), _heads(leaves)
    _grow(store, entries, seed=1)
    for index in (0, 12_345, 65_535, 65_536, 69_999):
        tiles = Tiles(store, PREFIX)
        proof = Tree(tiles, 70_000).inclusion(index)
        assert tlog.verify_inclusion(index, 70_000, leaves[index], proof, heads[70_000])
        assert tiles.reads <= 8, (index, tiles.reads)  # 3 * log2(n) would allow 48
    tiles = Tiles(store, PREFIX)
    proof = Tree(tiles, 70_000).consistency(69_000)
    assert tlog.verify_consistency(69_000, 70_000, heads[69_000], heads[70_000], proof)
    assert tiles.reads <= 8


def test_tiles_an_older_size_reads_through_superseded_partials(tmp_path: Path) -> None:
    """A partial tile deleted once a wider one exists: older sizes still prove from the tiles."""
    entries = _entries(1000)
    leaves = [tlog.leaf_hash(e) for e in entries]
    store = LocalStore(tmp_path)
    _grow(store, entries, seed=2)
    assert not store.exists(tile_key(PREFIX, 0, 3, 1))  # superseded
    tree = Tree(Tiles(store, PREFIX), 769)  # its partial tile 3 of width 1 is gone
    assert tree.root() == tlog.root(leaves[:769])
    assert tree.inclusion(768) == tlog.inclusion_proof(leaves[:769], 768)


def test_tiles_edge_reloaded_from_the_store_continues_the_same_tree(tmp_path: Path) -> None:
    """A writer that restarts reads the right edge back (a partial tile per level) and goes on."""
    entries = _entries(66_000)
    store = LocalStore(tmp_path)
    first = _grow(store, entries[:65_793])
    again = Edge.load(Tiles(store, PREFIX), 65_793)
    assert (again.rows, again.bundle, again.frontier) == (first.rows, first.bundle, first.frontier)
    for key, data in again.extend(entries[65_793:]).create.items():
        store.create(key, data)
    leaves = [tlog.leaf_hash(e) for e in entries]
    assert Tree(Tiles(store, PREFIX), 66_000).root() == _heads(leaves)[-1] == again.root()
