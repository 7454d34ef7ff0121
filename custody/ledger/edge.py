"""The right edge of a tiled log: what integrating new entries writes, computed in memory.

A tree of n leaves has, at each level L, one partial tile of ``(n >> 8L) % 256``
hashes on its right edge, and one partial entry bundle of ``n % 256`` entries;
everything left of them is full and never read again by the writer. The edge
holds exactly those, plus the frontier (the roots of the perfect subtrees of
n, whose fold is the tree head), so integrating a batch reads nothing: it
appends leaves, emits each tile and bundle that fills (created once, never
changed), then one partial tile per level that grew, and names the partials
they supersede, which may be deleted once the new ones are in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from custody.ledger import tlog
from custody.ledger.tiles import WIDTH, Tiles, Tree, bundle_key, encode_bundle, fold, tile_key

_BITS = 8


@dataclass
class Writes:
    """What one integration stores: objects to create, then superseded partials to delete."""

    create: dict[str, bytes] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)


@dataclass
class Edge:
    prefix: str
    size: int = 0
    rows: list[list[bytes]] = field(default_factory=list)
    bundle: list[bytes] = field(default_factory=list)
    frontier: list[bytes] = field(default_factory=list)

    @classmethod
    def load(cls, tiles: Tiles, size: int) -> Edge:
        """The edge of the stored tree of ``size`` leaves: one partial tile per level and
        the partial bundle (about log256(n) + 1 reads)."""
        tree, rows, level = Tree(tiles, size), [], 0
        while size >> (_BITS * level):
            count = size >> (_BITS * level)
            width = count % WIDTH
            data = tiles.hashes(level, count // WIDTH, width, width) if width else b""
            rows.append([data[i * 32 : (i + 1) * 32] for i in range(width)])
            level += 1
        width = size % WIDTH
        bundle = tiles.bundle(size // WIDTH, width, width)[:width] if width else []
        return cls(tiles.prefix, size, rows, bundle, _frontier(tree, size))

    def root(self) -> bytes:
        return tlog.frontier_root(self.frontier)

    def extend(self, entries: list[bytes]) -> Writes:
        """Append ``entries``; the objects that makes, and the partials it supersedes."""
        writes, before = Writes(), self.size
        for entry in entries:
            self._push_entry(entry, writes)
        self._partials(before, writes)
        return writes

    def _push_entry(self, entry: bytes, writes: Writes) -> None:
        leaf = tlog.leaf_hash(entry)
        self.frontier = tlog.frontier_push(self.frontier, self.size, leaf)
        self.size += 1
        self.bundle.append(entry)
        if len(self.bundle) == WIDTH:
            index = (self.size - 1) // WIDTH
            writes.create[bundle_key(self.prefix, index)] = encode_bundle(self.bundle)
            self.bundle = []
        self._push_hash(0, leaf, writes)

    def _push_hash(self, level: int, digest: bytes, writes: Writes) -> None:
        if level == len(self.rows):
            self.rows.append([])
        row = self.rows[level]
        row.append(digest)
        if len(row) == WIDTH:  # a full tile: stored once, and its root one level up
            index = (self.size - 1) >> (_BITS * (level + 1))
            writes.create[tile_key(self.prefix, level, index)] = b"".join(row)
            self.rows[level] = []
            self._push_hash(level + 1, fold(row), writes)

    def _partials(self, before: int, writes: Writes) -> None:
        """The right edge's partial tiles and bundle at the new size; those of ``before`` go."""
        for level in range(len(self.rows)):
            old, new = _place(before, level), _place(self.size, level)
            if old == new:
                continue
            if new[1]:
                writes.create[tile_key(self.prefix, level, *new)] = b"".join(self.rows[level])
            if old[1]:
                writes.delete.append(tile_key(self.prefix, level, *old))
        old, new = _place(before, 0), _place(self.size, 0)
        if old != new and new[1]:
            writes.create[bundle_key(self.prefix, *new)] = encode_bundle(self.bundle)
        if old != new and old[1]:
            writes.delete.append(bundle_key(self.prefix, *old))


def _place(size: int, level: int) -> tuple[int, int]:
    """(index, width) of level ``level``'s partial tile in a tree of ``size``; width 0: none."""
    count = size >> (_BITS * level)
    return count // WIDTH, count % WIDTH


def _frontier(tree: Tree, size: int) -> list[bytes]:
    """The perfect subtrees of ``size`` leaves, left to right: the binary digits of ``size``."""
    found, start = [], 0
    for height in range(size.bit_length() - 1, -1, -1):
        if size >> height & 1:
            found.append(tree.subtree(height, start))
            start += 1 << height
    return found
