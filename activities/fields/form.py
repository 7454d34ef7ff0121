"""Generic forms: question/answer pairs (FUNSD's links) found by geometry alone.

A key is a phrase ending in a colon ("Date:", "Fax No.:"); its answer is the
next phrase on the same line or, where nothing follows it there, the phrase
just below it in the same column. A phrase is a run of words no further
apart than two letters high.
"""

from __future__ import annotations

from collections.abc import Sequence

from activities.fields.choose import ocr_confidence
from activities.fields.layout import Line, Token, joined, span
from activities.fields.normalise import plain_text
from custody.fields import FormPair

#: How much less sure an answer below its key is than one beside it.
_BELOW = 0.85


def read_pairs(lines: Sequence[Line]) -> list[FormPair]:
    phrased = [(line, _phrases(line)) for line in lines]
    pairs = []
    for n, (line, phrases) in enumerate(phrased):
        for i, key in enumerate(phrases):
            if not key[-1].text.endswith(":") or len(joined(key)) < 2:
                continue
            beside = phrases[i + 1] if i + 1 < len(phrases) else None
            if beside is not None and not beside[-1].text.endswith(":"):
                pairs.append(_pair(key, beside, 1.0))
                continue
            below = _below(key, line, phrased[n + 1 : n + 3])
            if below is not None:
                pairs.append(_pair(key, below, _BELOW))
    return pairs


def _phrases(line: Line) -> list[list[Token]]:
    phrases: list[list[Token]] = []
    for tok in line.tokens:
        if (
            phrases
            and tok.x0 - phrases[-1][-1].x1 <= 2.0 * tok.height
            and not phrases[-1][-1].text.endswith(":")
        ):
            phrases[-1].append(tok)
        else:
            phrases.append([tok])
    return phrases


def _below(
    key: list[Token], line: Line, following: Sequence[tuple[Line, list[list[Token]]]]
) -> list[Token] | None:
    for next_line, phrases in following:
        if next_line.page != line.page or next_line.cy - line.cy > 3.0 * line.height:
            return None
        for phrase in phrases:
            # Under the key: starting in its column.
            under = abs(phrase[0].x0 - key[0].x0) <= 1.5 * line.height
            if under and not phrase[-1].text.endswith(":"):
                return phrase
    return None


def _pair(key: list[Token], value: list[Token], geometry: float) -> FormPair:
    return FormPair(
        key=plain_text(joined(key)),
        value=plain_text(joined(value)),
        page=key[0].page,
        key_box=span(key),
        value_box=span(value),
        confidence=round(geometry * ocr_confidence([*key, *value]), 4),
    )
