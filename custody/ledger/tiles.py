"""The log's tiles (C2SP tlog-tiles): where they live, how they read, and proofs from them.

Under a log's prefix (``ledger/<scope>/``) a tree of n leaves is stored as

    tile/<L>/<N>[.p/<W>]        hash tiles: 256 hashes of tree level 8L, 32 bytes each
    tile/entries/<N>[.p/<W>]    entry bundles: 256 entries, each a big-endian uint16 length
                                and the entry's bytes (an event's stored JSON)

with ``<N>`` in groups of three digits, all but the last prefixed ``x``
(1234067 is ``x001/x234/067``), and the right edge at each level a partial
tile of width ``W = (n >> 8L) % 256``. Every object is created once and never
changes: a partial tile of width W is replaced by one of a larger width (or the
full tile), and the older one may be deleted. So a reader of tree size n asks
for the width n implies, then the full tile, then any wider partial.

:class:`Tree` hashes any range of leaves from the tiles: a complete aligned
subtree of height h is 2^(h mod 8) stored hashes of one tile at level h // 8,
so an inclusion or consistency proof reads about one tile per level on the
path and one per level on the right edge: O(log n) objects, never the log.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from custody.ledger import tlog
from custody.stores import ObjectMissing

WIDTH = 256
HASH = 32
_LEVEL_BITS = 8
_ENTRIES = -1  # the bundles' place among the levels, for the cache and keys


def index_path(index: int) -> str:
    """``1234067`` -> ``x001/x234/067`` (C2SP tlog-tiles)."""
    digits = str(index)
    groups = [digits[max(0, end - 3) : end] for end in range(len(digits), 0, -3)][::-1]
    groups[0] = groups[0].zfill(3)
    return "/".join([*(f"x{g}" for g in groups[:-1]), groups[-1]])


def tile_key(prefix: str, level: int, index: int, width: int = WIDTH) -> str:
    partial = f".p/{width}" if width < WIDTH else ""
    return f"{prefix}tile/{level}/{index_path(index)}{partial}"


def bundle_key(prefix: str, index: int, width: int = WIDTH) -> str:
    partial = f".p/{width}" if width < WIDTH else ""
    return f"{prefix}tile/entries/{index_path(index)}{partial}"


def width_at(size: int, level: int, index: int) -> int:
    """Hashes tile (level, index) holds in a tree of ``size`` leaves: 0 (none) to 256."""
    shift = _LEVEL_BITS * level
    return max(0, min(WIDTH, (size >> shift) - index * WIDTH))


def encode_bundle(entries: list[bytes]) -> bytes:
    out = bytearray()
    for entry in entries:
        if len(entry) > 0xFFFF:
            raise ValueError("an entry beyond 65535 bytes cannot be bundled")
        out += len(entry).to_bytes(2, "big") + entry
    return bytes(out)


def decode_bundle(data: bytes) -> list[bytes]:
    entries, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 2], "big")
        if at + 2 + size > len(data):
            raise ValueError("entry bundle truncated")
        entries.append(data[at + 2 : at + 2 + size])
        at += 2 + size
    return entries


def _count_entries(data: bytes) -> int:
    count = at = 0
    while at + 2 <= len(data):
        at += 2 + int.from_bytes(data[at : at + 2], "big")
        count += 1
    return count if at == len(data) else -1


def fold(hashes: list[bytes]) -> bytes:
    """The root of 2^k equal, adjacent subtrees' hashes (k <= 8)."""
    while len(hashes) > 1:
        hashes = [tlog.node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


class Readable(Protocol):
    """The part of an object store that reading tiles needs."""

    def get(self, key: str) -> bytes: ...

    def list(self, prefix: str) -> Iterator[str]: ...


class Objects:
    """Objects held in memory (a tree built for reading, never stored)."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self._objects = objects

    def get(self, key: str) -> bytes:
        try:
            return self._objects[key]
        except KeyError:
            raise ObjectMissing(key) from None

    def list(self, prefix: str) -> Iterator[str]:
        return iter(sorted(k for k in self._objects if k.startswith(prefix)))


class Tiles:
    """Reads one log's tiles and bundles from the store, each object at most once.

    ``reads`` counts store operations, so a benchmark can show what a proof cost.
    """

    def __init__(self, store: Readable, prefix: str) -> None:
        self.store, self.prefix = store, prefix
        self.reads = 0
        self._cache: dict[tuple[int, int], bytes] = {}
        self._bundles: dict[int, list[bytes]] = {}

    def hashes(self, level: int, index: int, need: int, width: int) -> bytes:
        """At least ``need`` hashes of tile (level, index), which a tree holds ``width`` of;
        ObjectMissing when no stored tile has them."""
        return self._read(level, index, need, width)

    def bundle(self, index: int, need: int, width: int) -> list[bytes]:
        """At least ``need`` entries of bundle ``index`` (a tree holds ``width`` of them)."""
        cached = self._bundles.get(index)
        if cached is None or len(cached) < need:
            cached = self._bundles[index] = decode_bundle(self._read(_ENTRIES, index, need, width))
        return cached

    def key(self, level: int, index: int, width: int = WIDTH) -> str:
        """A hash tile's key, or (level ``-1``) an entry bundle's."""
        if level == _ENTRIES:
            return bundle_key(self.prefix, index, width)
        return tile_key(self.prefix, level, index, width)

    def _read(self, level: int, index: int, need: int, width: int) -> bytes:
        cached = self._cache.get((level, index))
        if cached is not None and self._holds(level, cached, need):
            return cached
        for tried in dict.fromkeys((max(width, need), WIDTH)):
            data = self._get(self.key(level, index, tried))
            if data is not None and self._holds(level, data, need):
                self._cache[(level, index)] = data
                return data
        return self._wider(level, index, need)

    def _wider(self, level: int, index: int, need: int) -> bytes:
        """A partial tile wider than asked: the one asked for was superseded and deleted."""
        folder = self.key(level, index, 1).rpartition("/")[0] + "/"
        self.reads += 1
        names = (key[len(folder) :] for key in self.store.list(folder))
        for width in sorted(int(n) for n in names if n.isdigit() and int(n) >= need):
            data = self._get(self.key(level, index, width))
            if data is not None and self._holds(level, data, need):
                self._cache[(level, index)] = data
                return data
        raise ObjectMissing(self.key(level, index, need))

    def _holds(self, level: int, data: bytes, need: int) -> bool:
        if level == _ENTRIES:
            return _count_entries(data) >= need
        return len(data) % HASH == 0 and len(data) // HASH >= need

    def _get(self, key: str) -> bytes | None:
        self.reads += 1
        try:
            return self.store.get(key)
        except ObjectMissing:
            return None


class Tree:
    """A tree of ``size`` leaves read from tiles: roots, ranges, entries and RFC 9162 proofs."""

    def __init__(self, tiles: Tiles, size: int) -> None:
        self.tiles, self.size = tiles, size

    def subtree(self, height: int, start: int) -> bytes:
        """The hash of the complete subtree of 2^height leaves from ``start`` (aligned)."""
        level, rest = divmod(height, _LEVEL_BITS)
        first = start >> (_LEVEL_BITS * level)
        count = 1 << rest
        index, at = divmod(first, WIDTH)
        data = self.tiles.hashes(level, index, at + count, width_at(self.size, level, index))
        return fold([data[(at + i) * HASH : (at + i + 1) * HASH] for i in range(count)])

    def range_hash(self, lo: int, hi: int) -> bytes:
        """MTH of leaves [lo, hi): split at the largest power of two, as RFC 9162 does."""
        n = hi - lo
        if n <= 0:
            return tlog.EMPTY_ROOT
        if n & (n - 1) == 0 and lo % n == 0:
            return self.subtree(n.bit_length() - 1, lo)
        k = 1 << ((n - 1).bit_length() - 1)
        return tlog.node_hash(self.range_hash(lo, lo + k), self.range_hash(lo + k, hi))

    def root(self, size: int | None = None) -> bytes:
        return self.range_hash(0, self.size if size is None else size)

    def leaf(self, index: int) -> bytes:
        return self.subtree(0, index)

    def entry(self, index: int) -> bytes:
        """Leaf ``index``'s bytes, from its entry bundle."""
        bundle, at = divmod(index, WIDTH)
        return self.tiles.bundle(bundle, at + 1, width_at(self.size, 0, bundle))[at]

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(index) in the tree of ``size`` (default: this tree's) leaves."""
        n = self.size if size is None else size
        if not 0 <= index < n:
            raise ValueError("leaf index outside the tree")
        return self._path(index, 0, n)

    def _path(self, m: int, lo: int, hi: int) -> list[bytes]:
        if hi - lo == 1:
            return []
        k = 1 << ((hi - lo - 1).bit_length() - 1)
        if m < lo + k:
            return [*self._path(m, lo, lo + k), self.range_hash(lo + k, hi)]
        return [*self._path(m, lo + k, hi), self.range_hash(lo, lo + k)]

    def consistency(self, old: int, new: int | None = None) -> list[bytes]:
        """PROOF(old, new): the tree of ``old`` leaves is a prefix of the tree of ``new``."""
        n = self.size if new is None else new
        if not 0 <= old <= n:
            raise ValueError("old size outside the tree")
        return [] if old in (0, n) else self._subproof(old, 0, n, True)

    def _subproof(self, m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
        if m == hi - lo:
            return [] if whole else [self.range_hash(lo, hi)]
        k = 1 << ((hi - lo - 1).bit_length() - 1)
        if m <= k:
            return [*self._subproof(m, lo, lo + k, whole), self.range_hash(lo + k, hi)]
        return [*self._subproof(m - k, lo + k, hi, False), self.range_hash(lo, lo + k)]
