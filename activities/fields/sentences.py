"""Values a letter's sentence names: "I am referring ... on 3rd March 2026", "participant ABC-123".

A cue in the sentence plays the label: a referral's verb before the date it
was made on, a participant's or a subject's word before its identifier. The
date must follow the cue in the same sentence, straight after "on" or
"dated", with nothing between them that makes it another event's ("seen",
"born", "appointment"); the identifier must follow its cue at once. These are
label-anchored readings (``choose.Reading.anchored``), a little less sure
than a form's label; two sentences giving two values disagree, and go to
review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from activities.fields import values
from activities.fields.choose import Reading, ocr_confidence
from activities.fields.layout import Line, Token, joined
from activities.fields.normalise import dates_in

#: How sure a sentence's value is when OCR was sure of its words: below a form's label
#: (``referral.PLACES``), above the bars.
DATE_CUE, ID_CUE = 0.93, 0.93
_REFERS = re.compile(r"\b(?:referr(?:ing|ed|al)|refer)\b", re.I)
#: The word straight before a referral's date in a sentence.
_ON = re.compile(r"\b(?:on|dated|of)\s*,?\s*(?:the\s+)?$", re.I)
#: Words that make the date after them another event's, not the referral's.
_OTHER_EVENT = re.compile(
    r"\b(?:saw|seen|see|visit\w*|appointment|admi\w*|discharg\w*|born|birth|dob|d\.o\.b|fax\w*|"
    r"attend\w*|review\w*|since|until|last|next|from|operat\w*|surgery|scan\w*|test\w*|"
    r"result\w*|booked|scheduled|started|diagnos\w*)\b",
    re.I,
)
_ID_CUE = re.compile(
    r"\b(?:(?:study|trial|research)\s+)?(?:participant|subject)(?:\s+(?:id|identifier|no\.?|"
    r"number|code|ref\.?|reference))?(?:\s+(?:is|was|number|no\.?))?\s*[:#]?\s*"
    r"|\b(?:study|trial|research|enrolment|enrollment|randomi[sz]ation)\s+(?:id|identifier|"
    r"no\.?|number|code)(?:\s+(?:is|was))?\s*[:#]?\s*"
    r"|\b(?:enrol(?:l)?ed|randomi[sz]ed|registered)\s+(?:as|under)\s+(?:(?:participant|subject)\s+)?",
    re.I,
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_RUN_ON = 2.5  # line heights: a sentence runs on to the next line within this


def readings(field: str, lines: Sequence[Line]) -> list[Reading]:
    """The field's values the letter's sentences name (dates and identifiers only)."""
    if field == "referral_date":
        return [r for n in range(len(lines)) for r in _dates(_sentence_at(lines, n), lines[n])]
    if field == "participant_id":
        return [
            r for n in range(len(lines)) for r in _identifiers(_sentence_at(lines, n), lines[n])
        ]
    return []


def _dates(words: list[Token], line: Line) -> list[Reading]:
    text = joined(words)
    own = len(joined(line.tokens))
    found = []
    hits = dates_in(text)
    for n, hit in enumerate(hits):
        if hit.start >= own:
            continue  # the next line's date: read with that line
        before = text[: hit.start]
        cue = _last_cue(before)
        since = max(cue, hits[n - 1].end if n else 0)
        if cue < 0 or not _ON.search(before) or _OTHER_EVENT.search(text[since : hit.start]):
            continue
        used = _covering(words, hit.start, hit.end)
        sure = DATE_CUE * (0.8 if hit.repaired else 1.0) * ocr_confidence(used)
        found.append(Reading(hit.iso, tuple(used), sure, "sentence:date"))
    return found


def _identifiers(words: list[Token], line: Line) -> list[Reading]:
    text = joined(words)
    own = len(joined(line.tokens))
    found = []
    for cue in _ID_CUE.finditer(text):
        if cue.start() >= own or cue.end() >= len(text) or text[cue.end() - 1] not in " :#":
            continue
        start = _token_starting(words, cue.end())
        if start is None:
            continue
        parsed = values.identifier_value(words[start:])
        if parsed is None or _YEAR.match(str(parsed[0])):
            continue
        value, used, quality = parsed
        sure = ID_CUE * quality
        found.append(Reading(value, tuple(used), sure, "sentence:identifier"))
    return found


def _sentence_at(lines: Sequence[Line], n: int) -> list[Token]:
    """Line ``n`` and, where its sentence runs on, the next line of its paragraph."""
    words = list(lines[n].tokens)
    if n + 1 < len(lines) and not words[-1].text.endswith("."):
        after = lines[n + 1]
        if after.page == lines[n].page and 0 < after.cy - lines[n].cy <= _RUN_ON * lines[n].height:
            words += list(after.tokens)
    return words


def _last_cue(before: str) -> int:
    """Where the last referral cue of the sentence ``before`` ends in ends, or -1."""
    start = max(before.rfind(". "), before.rfind("; "), before.rfind("? "), before.rfind("! "))
    ends = [m.end() for m in _REFERS.finditer(before, start + 1)]
    return ends[-1] if ends else -1


def _covering(words: Sequence[Token], start: int, end: int) -> list[Token]:
    out, at = [], 0
    for tok in words:
        if at < end and start < at + len(tok.text):
            out.append(tok)
        at += len(tok.text) + 1
    return out


def _token_starting(words: Sequence[Token], offset: int) -> int | None:
    """The index of the word that starts at character ``offset`` of the joined words."""
    at = 0
    for i, tok in enumerate(words):
        if at == offset:
            return i
        at += len(tok.text) + 1
    return None
