"""Consent as a decision: true only on affirmative evidence, false on any refusal, else review.

Evidence comes three ways, each a yes, a no, or *unsure*:

- **Options after a consent label** ("Consent to share: [x] Yes [ ] No"):
  the option whose box is clearly inked while every other's is clearly empty;
  with no boxes beside them, a single written answer ("Consent: declined").
- **Ticked statements** ("[x] The patient does not consent to ..."): each
  box's statement says yes or no (``negation``); a marked box gives its
  statement's answer, a smudged one is unsure, an empty one says nothing.
- **Columns** headed "Yes" and "No" with a box under each on a question's row:
  the inked column answers the question as it is asked.
- **Sentences** of a letter ("Consent to share these notes has NOT been
  given."), read by the same negation rules.

Consent is a value only when there is evidence, none of it unsure, all of it
agreeing; conflicting, unsure or absent evidence is review (missing when no
consent label or wording is on the pages at all). OCR seldom reads a tick or
a cross, so the OCR activity records each page's boxes and their ink
(``PageText.marks``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from activities.fields.anchors import Anchor
from activities.fields.choose import Reading, decide, ocr_confidence
from activities.fields.layout import Line, Token, joined, span
from activities.fields.negation import deciding, polarity, speaks_of_consent
from activities.fields.normalise import consent_word
from custody.fields import FoundField
from custody.models import Mark, PageText

#: Ink share inside a box above which it is marked, and below which it is empty.
MARKED = 0.10
EMPTY = 0.03
#: How sure each kind of evidence is when OCR was sure of its words (measured, see BARS).
OPTIONS, WRITTEN, STATEMENT, SENTENCE = 0.96, 0.93, 0.94, 0.95
#: A statement ticked with no opposite statement left empty beside it is less sure.
LONE = 0.94


@dataclass(frozen=True)
class _Evidence:
    value: bool | None  # None: unsure
    reading: Reading | None


def read_consent(
    pages: Sequence[PageText], lines: Sequence[Line], anchors: Sequence[Anchor], bar: float
) -> FoundField:
    marks = {page.page: page.marks for page in pages}
    own = [a for a in anchors if a.kind == "consent"]
    answered = {a.line: e for a in own if (e := _from_options(a, lines, anchors, marks))}
    found = [
        *answered.values(),
        *_from_statements(lines, marks),
        *_from_columns(lines, marks),
        *_from_sentences(lines, marks, set(answered)),
    ]
    seen = bool(own) or any(speaks_of_consent(line.text) for line in lines)
    values = {e.value for e in found}
    if not found or None in values or len(values) > 1:
        return FoundField(name="consent", status="review" if found or seen else "missing")
    readings = [e.reading for e in found if e.reading is not None]
    weakest = min(readings, key=lambda r: r.confidence)
    return decide("consent", [weakest], bar, seen=True)


def _from_options(
    anchor: Anchor, lines: Sequence[Line], anchors: Sequence[Anchor], marks: dict[int, list[Mark]]
) -> _Evidence | None:
    """The answer after a consent label: a marked option's, or the one word written.

    Only a line that holds nothing after its label but answers (and box
    glyphs read as letters) is a question with options; "Consent to share
    these notes has NOT been given." is a sentence, read as one.
    """
    line = lines[anchor.line]
    if _beside_a_box(line, marks.get(line.page, [])):
        return None  # a ticked statement that names consent: read as a statement
    stop = min(
        (a.start for a in anchors if a.line == anchor.line and a.start >= anchor.end),
        default=len(line.tokens),
    )
    after = [t for t in line.tokens[anchor.end : stop] if _a_word(t.text)]
    options = [(v, t) for t in after if (v := consent_word(t.text)) is not None]
    if not options or len(options) < len(after):
        return None
    page_marks = marks.get(line.page, [])
    boxes = [_box_beside(tok, page_marks) for _, tok in options]
    if len(options) >= 2 or any(box is not None for box in boxes):
        return _ticked_option(options, boxes)
    value, tok = options[0]
    sure = WRITTEN * anchor.score * ocr_confidence([tok])
    return _Evidence(value, Reading(value, (tok,), sure, "anchor:right-of"))


def _a_word(text: str) -> bool:
    """A word, not a box glyph read as a letter ("X", "[", "□"); "Y" and "N" are answers."""
    letters = sum(c.isalnum() for c in text)
    return letters > 1 or (
        letters == 1 and consent_word(text) is not None and text.strip(".:").isalpha()
    )


def _ticked_option(options: list[tuple[bool, Token]], boxes: list[Mark | None]) -> _Evidence:
    """One option clearly inked, every other clearly empty; anything else is unsure."""
    if any(box is None for box in boxes):
        return _Evidence(None, None)
    marked = [(v, t) for (v, t), m in zip(options, boxes, strict=True) if m and m.ink >= MARKED]
    empty = [t for (_, t), m in zip(options, boxes, strict=True) if m and m.ink <= EMPTY]
    if len(marked) != 1 or len(empty) != len(options) - 1 or len({v for v, _ in options}) < 2:
        return _Evidence(None, None)
    value, tok = marked[0]
    # The ink decides; the words only name the options, and a yes misread is no "No".
    sure = OPTIONS * (0.9 + 0.1 * ocr_confidence([t for _, t in options]))
    return _Evidence(value, Reading(value, (tok,), sure, "checkbox"))


def _from_statements(lines: Sequence[Line], marks: dict[int, list[Mark]]) -> list[_Evidence]:
    """Each box whose statement speaks of consent: a marked one's answer, a smudge's doubt."""
    said: list[tuple[bool | None, float, tuple[Token, ...]]] = []  # answer, ink, words
    for page, page_marks in marks.items():
        for mark in page_marks:
            words = tuple(_statement(mark, [line for line in lines if line.page == page]))
            if words and speaks_of_consent(joined(words)):
                said.append((polarity(joined(words), ticked=True), mark.ink, words))
    found = []
    for answer, ink, words in said:
        if ink <= EMPTY:
            continue
        if answer is None or ink < MARKED:
            found.append(_Evidence(None, None))  # a smudge, or a statement nobody can read
            continue
        # The opposite statement beside it, empty, checks the reading of both: OCR's doubt
        # over a word then counts little. A statement alone is only as sure as its words.
        ocr = ocr_confidence(words)
        paired = any(a is not None and a != answer and i <= EMPTY for a, i, _ in said)
        # Paired, they are a question's two options (one inked, one empty), as sure.
        conf = OPTIONS * (0.9 + 0.1 * ocr) if paired else STATEMENT * LONE * ocr
        found.append(_Evidence(answer, Reading(answer, words, conf, "checkbox:statement")))
    return found


def _from_columns(lines: Sequence[Line], marks: dict[int, list[Mark]]) -> list[_Evidence]:
    """A question about consent with its answers' boxes in columns headed "Yes" and "No"
    ("Permission to share records - does the patient agree?  [ ] [x]" under "Yes No"): the
    column whose box is inked, every other's empty, answers the question as it is asked."""
    found = []
    for n, line in enumerate(lines):
        boxes = _row_boxes(line, marks.get(line.page, []))
        if len(boxes) < 2:
            continue
        words = [t for t in line.tokens if t.x1 <= boxes[0].box[0]]
        if not words or not speaks_of_consent(joined(words)):
            continue
        header = _column_header(lines, n, boxes)
        if header is None:
            continue
        asked = polarity(joined(words).replace("?", " "), ticked=True)
        inked = [v for v, b in zip(header, boxes, strict=True) if b.ink >= MARKED]
        empty = [b for b in boxes if b.ink <= EMPTY]
        if asked is None or len(inked) != 1 or len(empty) != len(boxes) - 1:
            found.append(_Evidence(None, None))
            continue
        value = inked[0] if asked else not inked[0]
        sure = OPTIONS * (0.9 + 0.1 * ocr_confidence(words))
        found.append(_Evidence(value, Reading(value, tuple(words), sure, "checkbox:column")))
    return found


def _row_boxes(line: Line, marks: Sequence[Mark]) -> list[Mark]:
    """The boxes on the line's row right of its first word, left to right."""
    x0, y0, _, y1 = span(line.tokens)
    on_row = [m for m in marks if m.box[1] < y1 and y0 < m.box[3] and m.box[0] > x0]
    return sorted(on_row, key=lambda m: m.box[0])


def _column_header(lines: Sequence[Line], n: int, boxes: Sequence[Mark]) -> list[bool] | None:
    """The answers heading the boxes' columns: the nearest line above made of answer words
    only, one over each box (its centre within a box's width), yes and no both there."""
    for line in reversed([ln for ln in lines[:n] if ln.page == lines[n].page]):
        answers = [consent_word(t.text) for t in line.tokens]
        if None in answers:
            continue
        heads = []
        for box in boxes:
            mid, side = (box.box[0] + box.box[2]) / 2, max(1, box.box[2] - box.box[0])
            over = [a for t, a in zip(line.tokens, answers, strict=True)
                    if abs((t.x0 + t.x1) / 2 - mid) <= 1.5 * side]  # fmt: skip
            heads.append(over[0] if len(over) == 1 else None)
        if None in heads or len(set(heads)) < 2:
            return None
        return [bool(h) for h in heads]
    return None


def _statement(mark: Mark, lines: Sequence[Line]) -> list[Token]:
    """The words printed right of a box on its line, up to a wide gap."""
    x0, y0, x1, y1 = mark.box
    side = max(1, y1 - y0)
    for line in lines:
        if abs(line.cy - (y0 + y1) / 2) > 0.6 * side:
            continue
        starts = [i for i, t in enumerate(line.tokens) if x1 - side / 2 <= t.x0 <= x1 + 3 * side]
        if starts:
            run = [line.tokens[starts[0]]]
            for tok in line.tokens[starts[0] + 1 :]:
                if tok.x0 - run[-1].x1 > 2 * tok.height:
                    break
                run.append(tok)
            return run
    return []


def _from_sentences(
    lines: Sequence[Line], marks: dict[int, list[Mark]], answered: set[int]
) -> list[_Evidence]:
    """Sentences of prose that give or refuse consent, each with its answer or its doubt."""
    found = []
    for words in _sentences(lines, marks, answered):
        text = joined(words)
        if not speaks_of_consent(text) or not _a_sentence(text):
            continue
        answer = polarity(text)
        if answer is None:
            found.append(_Evidence(None, None))
            continue
        decisive = [words[i] for i in deciding(text) if i < len(words)]
        sure = SENTENCE * ocr_confidence(decisive or words)
        reading = Reading(answer, tuple(words), sure, "sentence")
        found.append(_Evidence(answer, reading))
    return found


def _sentences(
    lines: Sequence[Line], marks: dict[int, list[Mark]], answered: set[int]
) -> list[list[Token]]:
    """The prose's sentences: paragraphs (lines close under each other) cut at full stops.

    Lines with a label (a colon), a question's options or a box beside them are
    the form around the prose, not sentences.
    """
    sentences: list[list[Token]] = []
    current: list[Token] = []
    before: Line | None = None
    for n, line in enumerate(lines):
        prose = n not in answered and ":" not in line.text
        if not prose or _beside_a_box(line, marks.get(line.page, [])):
            current, before = [], None
            continue
        apart = (
            before is None or line.page != before.page or line.cy - before.cy > 2.5 * line.height
        )
        if apart:
            current = []
        for tok in line.tokens:
            current.append(tok)
            if tok.text.endswith((".", "!", "?")):
                sentences.append(current)
                current = []
        before = line
    return sentences


def _a_sentence(text: str) -> bool:
    """Prose, not a form's heading or label: four words or more, ending in a full stop."""
    return len(text.split()) >= 4 and text.rstrip().endswith(".")


def _beside_a_box(line: Line, marks: Sequence[Mark]) -> bool:
    """Whether a box sits just left of the line's first word: the line is its statement."""
    x0, y0, _, y1 = span(line.tokens)
    reach = 3 * line.height
    return any(x0 - reach <= m.box[2] <= x0 + 4 and m.box[1] < y1 and y0 < m.box[3] for m in marks)


def _box_beside(tok: Token, marks: Sequence[Mark]) -> Mark | None:
    """The box just left of the option's word (or just right of it), on its line."""
    h = tok.height
    best: tuple[float, Mark] | None = None
    for mark in marks:
        x0, y0, x1, y1 = mark.box
        if not y0 - h <= tok.cy <= y1 + h:
            continue
        left = tok.x0 - x1
        right = x0 - tok.x1
        # The box may be read into the word ("□No"): then it overlaps the word's start.
        distance = (
            max(0, left)
            if -1.5 * h <= left <= 3 * h
            else right
            if -0.3 * h <= right <= 3 * h
            else None
        )
        if distance is not None and (best is None or distance < best[0]):
            best = (distance, mark)
    return best[1] if best else None
