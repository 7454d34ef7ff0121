"""Label anchors and the values beside them.

A label is found by its words, each compared after folding the letters OCR
confuses (``1D`` for ``ID``); long words may be one or two edits off, short
ones must match. Every label on a line is found at once and each stretch of
words goes to the label that fits it best, so "Referred by" is the clinician
and never the referral date, and a distractor's label (DOB, MRN, fax date)
ends the value of the field before it. A value is the run of words right of
its label on the same line, or the words just below it in the same column
(boxed grids print the label above the value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from activities.fields.layout import Line, Token
from activities.fields.normalise import edit_distance

_FOLD = str.maketrans({"0": "o", "1": "i", "l": "i", "|": "i", "5": "s"})
_NOT_WORD = re.compile(r"[^a-z0-9#]")


@dataclass(frozen=True)
class Anchor:
    kind: str
    line: int  # index into the lines of the document
    start: int  # first and last+1 token of the label on its line
    end: int
    score: float
    tokens: tuple[Token, ...]

    @property
    def x0(self) -> int:
        return self.tokens[0].x0

    @property
    def x1(self) -> int:
        return self.tokens[-1].x1

    @property
    def height(self) -> float:
        # The tallest word: "on" alone is only x-height high.
        return max(t.height for t in self.tokens)


@dataclass(frozen=True)
class Candidate:
    anchor: Anchor
    tokens: tuple[Token, ...]
    method: str  # "anchor:right-of" or "anchor:below"
    gap: float  # distance from the label, in label heights


def fold(text: str) -> str:
    return _NOT_WORD.sub("", text.lower()).translate(_FOLD)


@lru_cache(maxsize=65536)
def _word_score(seen: str, wanted: str) -> float:
    if seen == wanted:
        return 1.0
    if len(wanted) < 5 or not seen:
        return 0.0
    allowed = 1 if len(wanted) < 9 else 2
    if abs(len(seen) - len(wanted)) > allowed:
        return 0.0
    distance = edit_distance(seen, wanted)
    return 1.0 - 0.1 * distance if distance <= allowed else 0.0


def find_anchors(lines: Sequence[Line], labels: Mapping[str, Sequence[str]]) -> list[Anchor]:
    """Every label on every line, overlaps resolved in favour of the best, longest fit."""
    wanted = [
        (kind, [fold(w) for w in variant.split()], variant.endswith(":"))
        for kind, variants in labels.items()
        for variant in variants
    ]
    found: list[Anchor] = []
    for n, line in enumerate(lines):
        words = [fold(t.text) for t in line.tokens]
        for start in range(len(words)):
            for kind, parts, colon in wanted:
                score = _match(words, start, parts)
                if colon and score and not line.tokens[start + len(parts) - 1].text.endswith(":"):
                    score = 0.0
                if score > 0:
                    end = start + len(parts)
                    found.append(Anchor(kind, n, start, end, score, tuple(line.tokens[start:end])))
    found.sort(key=lambda a: (-(a.score * (a.end - a.start)), -a.score, a.line, a.start))
    kept: list[Anchor] = []
    for anchor in found:
        if not any(
            k.line == anchor.line and k.start < anchor.end and anchor.start < k.end for k in kept
        ):
            kept.append(anchor)
    return sorted(kept, key=lambda a: (a.line, a.start))


def _match(words: list[str], start: int, parts: list[str]) -> float:
    if start + len(parts) > len(words):
        return 0.0
    worst = 1.0
    for i, part in enumerate(parts):
        score = _word_score(words[start + i], part)
        if not score:
            return 0.0
        worst = min(worst, score)
    return worst


def candidates(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Candidate]:
    """The value right of ``anchor`` and the one below it, where there is one."""
    return [c for c in (_right_of(anchor, lines, anchors), _below(anchor, lines, anchors)) if c]


def _right_of(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate | None:
    line = lines[anchor.line]
    stop = min(
        (a.start for a in anchors if a.line == anchor.line and a.start >= anchor.end),
        default=len(line.tokens),
    )
    run = _run(line.tokens[anchor.end : stop], anchor.height)
    if not run:
        return None
    return Candidate(anchor, tuple(run), "anchor:right-of", (run[0].x0 - anchor.x1) / anchor.height)


def _below(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate | None:
    h = anchor.height
    origin = lines[anchor.line]
    for n in range(anchor.line + 1, min(len(lines), anchor.line + 4)):
        line = lines[n]
        if line.page != origin.page or line.cy - origin.cy > 4.0 * h:
            return None
        firsts = [i for i, t in enumerate(line.tokens) if abs(t.x0 - anchor.x0) <= 1.5 * h]
        if not firsts:
            continue
        first = firsts[0]
        if any(a.line == n and a.start <= first < a.end for a in anchors):
            return None  # the next label of a list, not a value
        stop = min(
            (a.start for a in anchors if a.line == n and a.start > first), default=len(line.tokens)
        )
        run = _run(line.tokens[first:stop], h)
        gap = (line.cy - origin.cy) / h
        return Candidate(anchor, tuple(run), "anchor:below", gap) if run else None
    return None


def _run(tokens: Sequence[Token], height: float) -> list[Token]:
    """The first words of ``tokens`` that sit together (no gap wider than two letters high)."""
    run: list[Token] = []
    for tok in tokens:
        if run and tok.x0 - run[-1].x1 > 2.0 * height:
            break
        run.append(tok)
    return run
