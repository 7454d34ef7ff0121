"""Shape buckets: which pages share one detector call, which lines one recogniser call.

A GPU runs one big call far faster than many small ones, but only inputs of
one shape go into one call, and a runtime plans its kernels per shape. So
pages are padded up to a few fixed detector shapes (``DetBuckets``), planned
once at start-up, and lines are grouped by their input width (``line_groups``).

Padding is not free of consequence. The detector is convolutional: a page
padded with paper-white reads as it does alone except near its padded edges
(measured in docs/ocr-benchmark.md, "Batched"). The recogniser is not: it
mixes a line's columns globally, so a line padded by even 8 px can read
differently (on the corpus, 16 px buckets moved one receipt's word F1 by
0.026). Lines therefore share a call only at their own exact width unless
``line_px`` says otherwise, and the engine records the choice in its params.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

#: The detector's input sides are multiples of this (RapidOCR's DetPreProcess).
DET_STRIDE = 32


@dataclass(frozen=True)
class DetBuckets:
    """Detector input shapes: each side rounded up to a multiple of ``px`` (32: exact)."""

    px: int = DET_STRIDE
    long_side: int = 960  # the engine's ``det_max_side``: the shapes planned at start-up

    def bucket(self, height: int, width: int) -> tuple[int, int]:
        """The shape a ``height`` x ``width`` detector input is padded to."""
        return _up(height, self.px), _up(width, self.px)

    def planned(self) -> list[tuple[int, int]]:
        """Every bucket a page capped at ``long_side`` can land in, portrait and landscape."""
        long = self.bucket(self.long_side, self.long_side)[0]
        shorts = sorted({_up(s, self.px) for s in range(DET_STRIDE, long + 1, DET_STRIDE)})
        return [(long, s) for s in shorts] + [(s, long) for s in shorts if s != long]


def line_width(height: int, width: int, floor_px: int) -> int:
    """A line crop's recogniser input width at 48 px high, as RapidOCR sizes a line alone.

    ``TextRecognizer.resize_norm_img`` with a batch of one: the width is the
    line's own aspect at 48 px, never under ``floor_px`` (``rec_min_width``).
    """
    return int(48 * max(floor_px / 48, width / height))


def line_steps(input_width: int) -> int:
    """The recogniser's output columns for an input this wide (measured: (w + 3) // 8).

    A padded line's columns past its own are dropped before decoding, so it
    decodes over exactly the columns it would have alone.
    """
    return (input_width + 3) // 8


def line_groups(widths: Sequence[int], px: int, most: int) -> Iterator[tuple[int, list[int]]]:
    """``(call width, line indices)`` per recogniser call: lines sorted by width, each
    group padded to its widest, at most ``most`` lines; ``px`` 1 groups equal widths only."""
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    group: list[int] = []
    bucket = 0
    for i in order:
        mine = _up(widths[i], px)
        if group and (mine != bucket or len(group) == most):
            yield bucket, group
            group = []
        bucket = mine
        group.append(i)
    if group:
        yield bucket, group


def batch_size(pages: int, sizes: Sequence[int]) -> int:
    """The smallest planned batch size holding ``pages`` (the largest when none does)."""
    fits = [s for s in sorted(sizes) if s >= pages]
    return fits[0] if fits else max(sizes)


def powers_of_two(most: int) -> list[int]:
    """1, 2, 4 ... up to and including ``most`` (itself when not a power of two)."""
    sizes = [1 << k for k in range(int(math.log2(max(most, 1))) + 1)]
    return sizes if sizes[-1] == most else [*sizes, most]


def _up(value: int, step: int) -> int:
    return -(-value // step) * step
