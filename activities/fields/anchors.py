"""Label anchors and the places their values may be.

A label is found by its words, each compared after folding the letters OCR
confuses (``1D`` for ``ID``) and the abbreviations people print (``No``,
``Nr``, ``#`` and ``Number``; ``Pt`` and ``Patient``; ``Dt`` and ``Date``);
long words may be one or two edits off, short ones must match. Every label on
a line is found at once and each stretch of words goes to the label that fits
it best, so "Referred by" is the clinician and never the referral date, and a
distractor's label (DOB, MRN, fax date) ends the value of the field before it.

A value may sit right of its label on its line (close, or far off in a list's
value column), under it in its column (boxed grids and banner tables print the
label above; a value centred or indented under the label's width counts),
or, where the label ends a line of prose, at the start of the next line (a
letter's sentence wrapped). A bracketed note after a label ("(if known)") is
skipped.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from activities.fields.layout import Line, Token
from activities.fields.normalise import edit_distance

_FOLD = str.maketrans({"0": "o", "1": "i", "l": "i", "|": "i", "5": "s"})
_NOT_WORD = re.compile(r"[^a-z0-9#]")
#: Abbreviations and spellings of one word, mapped to one form (before folding).
_SAME = {
    "nr": "no",
    "num": "no",
    "number": "no",
    "#": "no",
    "identifier": "id",
    "ident": "id",
    "pt": "patient",
    "pat": "patient",
    "dt": "date",
    "appt": "appointment",
    "subj": "subject",
    "ppt": "participant",
    "ptcpt": "participant",
    "hosp": "hospital",
    "dept": "department",
    "org": "organisation",
    "refg": "referring",
    "reqg": "requesting",
    "reference": "ref",
    "enrollment": "enrolment",
    "randomization": "randomisation",
    "center": "centre",
    "organization": "organisation",
}
#: A word OCR read with a box's glyph before it: an option, never a label's word.
_BOXED = re.compile(r"^[\u2610-\u2612\u25a0-\u25a1\u2713-\u2718\[\]]")
_WIDE = 2.0  # label heights: a gap wider than this ends a value's run of words


def _folded(text: str) -> str:
    return _NOT_WORD.sub("", text.lower()).translate(_FOLD)


_SYNONYMS = {_folded(k): _folded(v) for k, v in _SAME.items()}


@dataclass(frozen=True)
class Anchor:
    kind: str
    line: int  # index into the lines of the document
    start: int  # first and last+1 token of the label on its line
    end: int
    score: float
    tokens: tuple[Token, ...]
    #: The label's wording as listed (``labels``), which it matched.
    wording: str = ""

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
    method: str  # "anchor:right-of", "anchor:below" or "anchor:wrapped"
    gap: float  # distance from the label, in label heights
    #: A prose value that stops unclosed at the page's right edge, with nothing found to
    #: continue it: it was cut, and which words it lost is unknown (``_continued``).
    cut: bool = False


def fold(text: str) -> str:
    """A word as labels are compared: lower case, OCR's look-alikes and abbreviations as one."""
    word = _folded(text)
    if len(word) > 1:
        word = word.replace("#", "")
    return _SYNONYMS.get(word, word)


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
    by_first = _by_first(tuple((kind, tuple(variants)) for kind, variants in labels.items()))
    found: list[Anchor] = []
    near: dict[str, list[tuple[int, str, tuple[str, ...], bool, str]]] = {}
    for n, line in enumerate(lines):
        words = [fold(t.text) for t in line.tokens]
        for start, word in enumerate(words):
            if word not in near:  # the wordings this word could begin, in their listed order
                near[word] = sorted(
                    e for first, es in by_first.items() if _word_score(word, first) for e in es
                )
            for _, kind, parts, colon, variant in near[word]:
                score, end = _match(words, start, parts)
                if score and not _together(line.tokens[start:end]):
                    score = 0.0  # "Consent | Given": a cell's label and the next cell's value
                if colon and score and not _colon_or_alone(line.tokens, start, end):
                    score = 0.0
                if score and any(_BOXED.match(t.text) for t in line.tokens[start + 1 : end]):
                    score = 0.0  # "Consent: ☑Given Declined": a box starts an option
                if score > 0:
                    printed = tuple(line.tokens[start:end])
                    found.append(Anchor(kind, n, start, end, score, printed, variant))
    found.sort(key=lambda a: (-(a.score * (a.end - a.start)), -a.score, a.line, a.start, a.kind))
    kept: list[Anchor] = []
    for anchor in found:
        if not any(
            k.line == anchor.line and k.start < anchor.end and anchor.start < k.end for k in kept
        ):
            kept.append(anchor)
    return sorted(kept, key=lambda a: (a.line, a.start))


@lru_cache(maxsize=64)
def _by_first(
    labels: tuple[tuple[str, tuple[str, ...]], ...],
) -> dict[str, list[tuple[int, str, tuple[str, ...], bool, str]]]:
    """The wordings, folded and in one order, grouped by their first word: a page's word is
    compared with each first word once, not with every wording (there are some 800)."""
    wanted = sorted(
        {
            (kind, tuple(fold(w) for w in variant.split()), variant.endswith(":"), variant)
            for kind, variants in labels
            for variant in variants
        }
    )
    grouped: dict[str, list[tuple[int, str, tuple[str, ...], bool, str]]] = {}
    for order, (kind, parts, colon, variant) in enumerate(wanted):
        grouped.setdefault(parts[0], []).append((order, kind, parts, colon, variant))
    return grouped


def _together(tokens: Sequence[Token]) -> bool:
    """A label's words sit together: none further from the last than two letters high."""
    h = max(t.height for t in tokens)
    return all(b.x0 - a.x1 <= _WIDE * h for a, b in zip(tokens, tokens[1:], strict=False))


def _colon_or_alone(tokens: Sequence[Token], start: int, end: int) -> bool:
    """A common word is a label where its colon is printed, or where it stands alone in its
    cell (a table's or a box's label): nothing within two letters high either side."""
    if tokens[end - 1].text.endswith(":"):
        return True
    h = max(t.height for t in tokens[start:end])
    before = start == 0 or tokens[start].x0 - tokens[start - 1].x1 > _WIDE * h
    after = end == len(tokens) or tokens[end].x0 - tokens[end - 1].x1 > _WIDE * h
    return before and after


#: Words a label may hold between its listed words ("Reason for this referral", "Date of
#: the request"): a label's wording with them is the same label.
_FILLERS = frozenset({"this", "the", "your", "our"})


def _match(words: list[str], start: int, parts: tuple[str, ...]) -> tuple[float, int]:
    """How well the words from ``start`` fit the wording ``parts``, and where the fit ends
    (one filler word may stand between two of its words)."""
    worst, at, skipped = 1.0, start, False
    for i, part in enumerate(parts):
        if at >= len(words):
            return 0.0, start
        score = _word_score(words[at], part)
        if not score and i and not skipped and words[at] in _FILLERS and at + 1 < len(words):
            at, skipped = at + 1, True
            score = _word_score(words[at], part)
        if not score:
            return 0.0, start
        worst = min(worst, score)
        at += 1
    return worst, at


def candidates(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> list[Candidate]:
    """The value right of ``anchor``, the one below it and the one a wrapped line begins with."""
    right = _right_of(anchor, lines, anchors)
    below = _below(anchor, lines, anchors)
    if right and below and _next_row(right, below, lines):
        below = None
    found = [c for c in (right, below, _wrapped(anchor, lines, anchors)) if c]
    return [_continued(c, lines, anchors) for c in found] if anchor.kind in PROSE else found


#: Fields whose value is prose that may wrap onto the lines under it.
PROSE = frozenset({"reason"})
_CLOSED = (".", "!", "?", ";")
_MAX_WRAPS = 4
_EDGE_LINES = 3  # other lines on the page, at least, to know where its text ends
_CUT_WORDS = 6  # words, at least, in a value that may have been cut
_RUN_IN = 1.5  # label heights: a value this close after its label runs on from it
_LABEL_WORDS = 5  # words: how far into a line a colon makes its start a label
_CELL_PITCH = 1.5  # a value under its label wraps at most this many times their spacing
_PITCH = 3.0  # tall words' heights: the most from one line of a wrapped value to the next


def _continued(found: Candidate, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate:
    """A prose value with the lines it wraps onto, one line down each, with no label on
    them, until a sentence closes: a line that starts in the value's column, or, where the
    value runs on from a label that opens its line and its line ran out of room (the next
    line's first word would not have fitted), one that starts under the label ("Why
    referred: ... and the cohort" / "study"). In a list's value column the next row's
    label stands there instead, so a value far right of its label never runs under it."""
    n = _line_of(found.tokens[-1], lines)
    tokens, column = list(found.tokens), found.tokens[0].x0
    h = statistics.median(t.height for t in found.tokens)  # the value's own print, not the label's
    # Its line's pitch goes by its tall words: an engine boxes a short word to its ink
    # (x-height), and 2.5 times a 19 px median under 60 px lines broke the wrap off.
    tall = sorted(t.height for t in found.tokens)[(3 * len(found.tokens)) // 4]
    edge = _text_edge(lines, lines[n].page, set(found.anchor.tokens) | set(tokens))
    # Run in after a label that opens its line, as a sentence (not in a list's column).
    hanging = found.anchor.start == 0 and found.anchor.line == n and found.gap <= _RUN_IN
    pitch = _PITCH * tall
    if found.method == "anchor:below":  # a cell's wrap is as tight as its label's
        top = lines[_line_of(found.tokens[0], lines)]
        pitch = min(pitch, _CELL_PITCH * (top.cy - lines[found.anchor.line].cy))
    for _ in range(_MAX_WRAPS):
        if tokens[-1].text.endswith(_CLOSED) or n + 1 >= len(lines):
            break
        line, after = lines[n], lines[n + 1]
        steps = after.page == line.page and 0.5 * h < after.cy - line.cy <= pitch
        first = after.tokens[0]
        ran_out = edge is not None and tokens[-1].x1 + 0.5 * h + (first.x1 - first.x0) > edge
        under = abs(first.x0 - column) <= h or (
            hanging and ran_out and abs(first.x0 - found.anchor.x0) <= h
        )
        if not steps or not under or _labelled(after) or any(a.line == n + 1 for a in anchors):
            break
        more = _run(after.tokens, h)
        if not _worded(more):
            break  # a code or a number under the value ("R41.3") is a cell's, not prose
        tokens += more
        n += 1
        hanging = hanging and ran_out
    # A short value ends where its line does on any form; a sentence's worth of words
    # stopping at the edge, unclosed, is what a cut looks like (a reason read to its
    # line's end was published at 0.93 missing its last eleven words).
    unclosed = not tokens[-1].text.endswith(_CLOSED) and len(tokens) >= _CUT_WORDS
    edge = _text_edge(lines, lines[n].page, set(tokens))
    cut = unclosed and edge is not None and edge - tokens[-1].x1 <= _WIDE * h
    return replace(found, tokens=tuple(tokens), cut=cut)


def _line_of(token: Token, lines: Sequence[Line]) -> int:
    return next(i for i, line in enumerate(lines) if token in line.tokens)


def _worded(tokens: Sequence[Token]) -> bool:
    """Whether most of ``tokens`` are words (two letters or more, no digit): prose."""
    words = [t for t in tokens if sum(c.isalpha() for c in t.text) >= 2]
    return 2 * sum(not any(c.isdigit() for c in t.text) for t in words) > len(tokens)


def _labelled(line: Line) -> bool:
    """Whether a line opens with a label of its own ("AGREES TO SHARING.: ..."), known to
    the label lists or not: its first words, one ending in a colon."""
    return any(t.text.endswith(":") for t in line.tokens[:_LABEL_WORDS])


def _text_edge(lines: Sequence[Line], page: int, mine: set[Token]) -> int | None:
    """The page's right text edge, measured on its lines but the value's own: a page of
    a few lines says nothing of where the print would have gone on."""
    ends = [
        max(t.x1 for t in line.tokens)
        for line in lines
        if line.page == page and not mine.intersection(line.tokens)
    ]
    return max(ends) if len(ends) >= _EDGE_LINES else None


def _next_row(right: Candidate, below: Candidate, lines: Sequence[Line]) -> bool:
    """Whether the words under a label begin the next row of its list, not its value.

    A label with its value far right, in a list's value column, and under it a
    line with words of its own in that column ("Problem ... Night sweats" over
    "Clinic appointment ... 23.09.2025"): the words under the label are the next
    row's label, whether or not any label list knows their wording. Words with a
    digit in them are a value's (a grid's date under its label), not a label's.
    """
    if right.gap <= _WIDE or any(c.isdigit() for t in below.tokens for c in t.text):
        return False
    row = next(line for line in lines if below.tokens[0] in line.tokens)
    column = right.tokens[0].x0
    h = right.anchor.height
    return any(
        abs(t.x0 - column) <= 1.5 * h and t.x0 - below.tokens[-1].x1 > _WIDE * h for t in row.tokens
    )


def _stop(line: int, after: int, anchors: Sequence[Anchor], default: int) -> int:
    """Where the next label on ``line`` at or after token ``after`` starts."""
    return min((a.start for a in anchors if a.line == line and a.start >= after), default=default)


def _right_of(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate | None:
    line = lines[anchor.line]
    stop = _stop(anchor.line, anchor.end, anchors, len(line.tokens))
    after = _past_an_alternative(anchor, _past_a_note(line.tokens[anchor.end : stop]))
    after = _past_a_qualifier(_past_a_tail(anchor, after))
    run = _run(_words_from(after), anchor.height)
    rest = list(after[after.index(run[-1]) + 1 :]) if run else []
    if _label_word(anchor, run, rest):
        run = _run(_words_from(rest), anchor.height)
    if not run:
        return None
    # Dot leaders or a colon between them join the label to its value: measured from them.
    leaders = [t for t in after if t.x1 <= run[0].x0]
    start = max([anchor.x1, *(t.x1 for t in leaders)])
    return Candidate(anchor, tuple(run), "anchor:right-of", (run[0].x0 - start) / anchor.height)


def _below(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate | None:
    h = anchor.height
    origin = lines[anchor.line]
    if anchor.start and anchor.x0 - origin.tokens[anchor.start - 1].x1 <= _WIDE * h:
        return None  # "The main concern is ...": a label inside a sentence heads no column
    for n in range(anchor.line + 1, min(len(lines), anchor.line + 4)):
        line = lines[n]
        if line.page != origin.page or line.cy - origin.cy > 4.0 * h:
            return None
        if line.cy - origin.cy < 0.5 * h:
            continue  # the same row, further right (a column read before this one)
        firsts = [i for i, t in enumerate(line.tokens) if abs(t.x0 - anchor.x0) <= 1.5 * h]
        # A value centred or indented in its cell starts a phrase under the label's width.
        firsts = firsts or [
            i
            for i, t in enumerate(line.tokens)
            if t.x0 < anchor.x1
            and anchor.x0 < t.x1
            and (i == 0 or t.x0 - line.tokens[i - 1].x1 > _WIDE * h)
        ]
        if not firsts:
            continue
        first = firsts[0]
        if any(a.line == n and a.start <= first < a.end for a in anchors):
            return None  # the next label of a list, not a value
        stop = _stop(n, first + 1, anchors, len(line.tokens))
        run = _run(line.tokens[first:stop], h)
        gap = (line.cy - origin.cy) / h
        return Candidate(anchor, tuple(run), "anchor:below", gap) if run else None
    return None


def _wrapped(anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor]) -> Candidate | None:
    """A label that ends a line of prose: its value starts the next line, at the margin."""
    line = lines[anchor.line]
    if anchor.line + 1 >= len(lines) or _words_from(line.tokens[anchor.end :]):
        return None
    after = lines[anchor.line + 1]
    h = anchor.height
    rises = 0.5 * h < after.cy - line.cy <= 2.5 * h
    if after.page != line.page or not rises or after.tokens[0].x0 > line.tokens[0].x0 + h:
        return None
    if any(a.line == anchor.line + 1 and a.start == 0 for a in anchors):
        return None
    run = _run(after.tokens[: _stop(anchor.line + 1, 1, anchors, len(after.tokens))], h)
    return (
        Candidate(anchor, tuple(run), "anchor:wrapped", (after.cy - line.cy) / h) if run else None
    )


#: What a label may end in after a wording that names its field already, per field.
_TAILS = {
    "participant_id": frozenset({"no", "number", "id", "code", "ref", "reference"}),
    "referring_clinic": frozenset({"name", "details"}),
    "clinician": frozenset({"name", "details"}),
}


def _past_a_tail(anchor: Anchor, tokens: Sequence[Token]) -> Sequence[Token]:
    """``tokens`` past a label's second tail: "Study ref. no. TRX/25/06656" is the listed
    "Study ref" and its "no.", "Practice / clinic name" the listed "Practice / Clinic" and
    its "name", whose value is what follows, however far right of it."""
    tails = _TAILS.get(anchor.kind, frozenset())
    return tokens[1:] if tokens and fold(tokens[0].text) in tails else tokens


def _label_word(anchor: Anchor, run: Sequence[Token], rest: Sequence[Token]) -> bool:
    """Whether the one word straight after a label is the label's own last word, its value
    standing apart further right ("Clinical issue raised ........ chronic pain", leaders
    read as a gap): a lower-case word a space away, with words after a wide gap."""
    if len(run) != 1 or not rest or not run[0].text.isalpha() or not run[0].text.islower():
        return False
    return run[0].x0 - anchor.x1 <= 1.0 * anchor.height


#: What a label may say of its value's length after its words ("Reason in brief").
_QUALIFIERS = (("in", "brief"), ("in", "short"), ("briefly",), ("brief",), ("summary",))


def _past_a_qualifier(tokens: Sequence[Token]) -> Sequence[Token]:
    """``tokens`` past the words that qualify a label ("Reason in brief  suspected ...")."""
    words = [t.text.lower().strip("():") for t in tokens[:2]]
    for qualifier in _QUALIFIERS:
        if tuple(words[: len(qualifier)]) == qualifier:
            return tokens[len(qualifier) :]  # nothing after it: no value on this line
    return tokens


def _past_a_note(tokens: Sequence[Token]) -> Sequence[Token]:
    """``tokens`` past a note printed after a label: "Study ID (if applicable): SUB-7".

    A bracketed run of words with no digit in it, closed within five words, is the
    form's note to whoever fills it in; a bracketed identifier ("(P-0042)") is a value.
    """
    if not tokens or not tokens[0].text.startswith(("(", "[")):
        return tokens
    for i, tok in enumerate(tokens[:5]):
        if any(c.isdigit() for c in tok.text):
            return tokens
        if tok.text.rstrip(":").endswith((")", "]")):
            return tokens[i + 1 :]
    return tokens


def _past_an_alternative(anchor: Anchor, tokens: Sequence[Token]) -> Sequence[Token]:
    """``tokens`` past a label's printed alternative: "WORKING DIAGNOSIS / QUERY", "Practice /
    clinic". A slash straight after the label joins a second wording of it, never a value: the
    wording runs to a word with a colon within three, else is the one word after the slash."""
    slashed = anchor.tokens[-1].text.endswith("/")
    if not slashed:
        if not tokens or not tokens[0].text.startswith("/"):
            return tokens
        if tokens[0].x0 - anchor.x1 > anchor.height:
            return tokens  # a slash far off: a value's own ("n/a"), not the label's
    # The alternative's words: after a lone "/", or "/QUERY" read as one word.
    rest = list(tokens[1:]) if not slashed and tokens[0].text == "/" else list(tokens)
    for i, tok in enumerate(rest[:3]):
        if tok.text.endswith(":"):
            return rest[i + 1 :]
    return rest[1:] if rest and rest[0].text.strip("/").isalpha() else tokens


def _words_from(tokens: Sequence[Token]) -> Sequence[Token]:
    """``tokens`` from the first that holds a letter or digit: a colon or dot leaders go."""
    for i, tok in enumerate(tokens):
        if any(c.isalnum() for c in tok.text):
            return tokens[i:]
    return ()


def _run(tokens: Sequence[Token], height: float) -> list[Token]:
    """The first words of ``tokens`` that sit together (no gap wider than two letters high)."""
    run: list[Token] = []
    for tok in tokens:
        if run and tok.x0 - run[-1].x1 > _WIDE * height:
            break
        run.append(tok)
    return run
