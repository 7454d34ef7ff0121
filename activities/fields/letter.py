"""Where a letter puts what a form labels: its date, its signature, the reason in a sentence.

Read only when no label gives the field (``referral``). The letter's date,
its signature and a "From:" line are found by position alone, so they clear
no bar (``choose.UNSINGLED``: a reviewer sees them) unless the letter itself
singles them out (``referral``: the one date, or the one clinician's signature,
of a letter with no other date or name a label does not explain); the reason's
cue names the field, as a label does. The letter's date is a line that is a
date and nothing else, above the salutation; the clinician is the name
under the closing ("Yours sincerely"); the reason is the phrase after a
referral's usual words for it ("regarding", "who presents with") up to the
end of its sentence; a fax cover's or a memo's "From:" names the clinic,
the clinician or both, a comma between them. A page with two such dates,
or two names, gives two readings, which disagree: review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from activities.fields import values
from activities.fields.anchors import Anchor
from activities.fields.choose import Reading, ocr_confidence
from activities.fields.layout import Line, Token, joined
from activities.fields.normalise import DateHit, dates_in, plain_text

#: How sure each reading is when OCR was sure of its words (see referral.BARS): none
#: of the first three was wrong on the tuning split (13, 24 and 10 readings); "From:"
#: had no reading there to measure, so it stays below every bar until it has.
DATE_LINE, SIGNATURE, REASON_CUE, SENDER = 0.92, 0.92, 0.93, 0.85
_WEEKDAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.I)
_SALUTATION = re.compile(r"^(dear|to whom)\b", re.I)
_CLOSING = re.compile(
    r"^(yours\s+(sincerely|faithfully|truly)|(with\s+)?(kind|best|warm)\s+(regards|wishes)"
    r"|regards|many\s+thanks|with\s+thanks|thank\s+you)\b",
    re.I,
)
_NAME = re.compile(
    r"^(?:(?:Dr|Prof|Mr|Mrs|Ms|Miss|Mx)\.?\s+)?(?:[A-Z][A-Za-z'-]*\.?\s+){0,2}[A-Z][A-Za-z'-]+$"
)
#: Words of a signature's role line ("General Practitioner"), never of a name.
_ROLES = frozenset(
    (
        *("practitioner", "physician", "consultant", "doctor", "nurse", "surgeon", "clinician"),
        *("gp", "registrar", "partner", "manager", "secretary", "team", "clinic", "surgery"),
        *("practice", "service", "department", "unit", "on", "behalf"),
    )
)
_CUE = re.compile(
    r"\b(?:regarding|with\s+regard\s+to|in\s+relation\s+to|because\s+of|for\s+(?:assessment|"
    r"review|investigation|management)\s+of|who\s+(?:presents|presented)\s+with|presenting\s+with|"
    r"complaining\s+of|main\s+concern\s+is|referred\s+(?:for|with))\s+",
    re.I,
)
_MAX_REASON_WORDS = 8
_TITLE = re.compile(r"^(?:Dr|Prof|Mr|Mrs|Ms|Miss|Mx)\b\.?")
_CLINIC_WORDS = ("clinic", "practice", "centre", "center", "surgery", "health", "medical")
_PHRASE_GAP = 2.0  # word heights: words further apart on a line are separate phrases


def letter_dates(lines: Sequence[Line]) -> list[Reading]:
    """Lines above the salutation that are a date and nothing else: a letter's date."""
    found = []
    for line in lines:
        if _SALUTATION.match(joined(line.tokens)):
            break
        for phrase in line.phrases(_PHRASE_GAP):  # a date set apart, right of "Our ref"
            hit = _only_a_date(phrase.text)
            if hit is not None:
                sure = DATE_LINE * (0.8 if hit.repaired else 1.0) * ocr_confidence(phrase.tokens)
                found.append(Reading(hit.iso, phrase.tokens, sure, "letter:date", anchored=False))
    return found


def addressed(lines: Sequence[Line]) -> frozenset[Token]:
    """The words of a letter's head: every line above its first salutation on that page,
    and the salutation itself (the addressee, the letterhead, "Dear Dr Marsh")."""
    first = _first_salutation(lines)
    if first is None:
        return frozenset()
    page = lines[first].page
    return frozenset(t for ln in lines[: first + 1] if ln.page == page for t in ln.tokens)


def signed_by_a_clinician(lines: Sequence[Line], reading: Reading) -> bool:
    """Whether a signature is a clinician's own: a title, or a clinical role under it, and
    no sign of someone signing for them ("p.p.", "Secretary", "on behalf of")."""
    n = next((i for i, ln in enumerate(lines) if reading.tokens[0] in ln.tokens), None)
    if n is None:
        return False
    near = " ".join(joined(ln.tokens).lower() for ln in lines[max(0, n - 1) : n + 3])
    if re.search(r"\bp\.?\s?p\b|secretary|administrat|coordinator|behalf|dictated", near):
        return False
    under = " ".join(joined(ln.tokens).lower() for ln in lines[n + 1 : n + 3])
    clinical = re.search(r"practitioner|physician|consultant|doctor|nurse|surgeon|\bgp\b", under)
    return bool(values.TITLED.match(str(reading.value)) or clinical)


def salutes(lines: Sequence[Line]) -> bool:
    """Whether the pages hold a letter's salutation ("Dear ...", "To whom ...")."""
    return _first_salutation(lines) is not None


def _first_salutation(lines: Sequence[Line]) -> int | None:
    return next((n for n, ln in enumerate(lines) if _SALUTATION.match(joined(ln.tokens))), None)


def _only_a_date(text: str) -> DateHit | None:
    """The date ``text`` is, when it is one date and nothing else but a weekday."""
    hits = dates_in(text)
    if len(hits) != 1:
        return None
    rest = _WEEKDAY.sub("", text[: hits[0].start] + text[hits[0].end :])
    return hits[0] if not re.sub(r"[^A-Za-z0-9]", "", rest) else None


def signatures(lines: Sequence[Line]) -> list[Reading]:
    """The first name-like line within four lines under each closing."""
    found = []
    for n, line in enumerate(lines):
        if not _CLOSING.match(joined(line.tokens)):
            continue
        for after in lines[n + 1 : n + 5]:
            if after.page != line.page:
                break
            text = plain_text(joined(after.tokens))
            roles = {w.lower().strip(".,") for w in text.split()} & _ROLES
            checked = values.person(after.tokens)
            if _NAME.match(text) and checked is not None and not roles:
                sure = SIGNATURE * checked[2]
                reading = Reading(
                    str(checked[0]), tuple(after.tokens), sure, "letter:signature", anchored=False
                )
                found.append(reading)
                break
    return found


def reasons(lines: Sequence[Line]) -> list[Reading]:
    """The phrase after a reason's cue, to the end of its sentence, in the letter's prose."""
    found = []
    for n, line in enumerate(lines):
        words = _sentence_from(lines, n)
        own = len(joined(line.tokens))
        for cue in _CUE.finditer(joined(words)):
            phrase = _to_full_stop(words[_token_at(words, cue.end()) :])
            checked = values.reason(phrase) if cue.start() < own and phrase else None
            if checked is not None:
                value = str(checked[0])
                sure = REASON_CUE * checked[2]
                value = value[:1].upper() + value[1:]
                # A cue word ("regarding") is no label: what follows it may be any
                # sentence's object ("... not to be contacted regarding the study").
                found.append(Reading(value, tuple(phrase), sure, "letter:sentence", anchored=False))
    return found


def senders(lines: Sequence[Line], anchors: Sequence[Anchor], field: str) -> list[Reading]:
    """The part of each "From:" value that is a clinic (``field`` "referring_clinic") or a
    clinician ("clinician"): "From: Dr Jones, Castlegate Surgery" holds both."""
    parse = values.place if field == "referring_clinic" else values.person
    found = []
    for anchor in (a for a in anchors if a.kind == "sender"):
        line = lines[anchor.line]
        stop = min(
            (a.start for a in anchors if a.line == anchor.line and a.start >= anchor.end),
            default=len(line.tokens),
        )
        for part in _comma_parts(line.tokens[anchor.end : stop]):
            text = joined(part).lower()
            clinic = any(w in text for w in _CLINIC_WORDS)
            titled = bool(_TITLE.match(joined(part)))
            if (field == "referring_clinic" and clinic and not titled) or (
                field == "clinician" and titled
            ):
                checked = parse(part)
                if checked is not None:
                    sure = SENDER * checked[2]
                    value = str(checked[0]).rstrip(",")
                    # "From:" says who sent it, not which part is the clinic: position decides.
                    found.append(Reading(value, tuple(part), sure, "letter:from", anchored=False))
    return found


def _comma_parts(tokens: Sequence[Token]) -> list[list[Token]]:
    parts: list[list[Token]] = [[]]
    for tok in tokens:
        parts[-1].append(tok)
        if tok.text.endswith(","):
            parts.append([])
    return [p for p in parts if p]


def _sentence_from(lines: Sequence[Line], n: int) -> list[Token]:
    """Line ``n`` and, where its sentence runs on, the next line of its paragraph."""
    words = list(lines[n].tokens)
    if n + 1 < len(lines) and not words[-1].text.endswith("."):
        after = lines[n + 1]
        if after.page == lines[n].page and 0 < after.cy - lines[n].cy <= 2.5 * lines[n].height:
            words += list(after.tokens)
    return words


def _token_at(words: Sequence[Token], offset: int) -> int:
    """The index of the word that character ``offset`` of the joined words falls in."""
    at = 0
    for i, tok in enumerate(words):
        if offset <= at + len(tok.text):
            return i if offset < at + len(tok.text) else i + 1
        at += len(tok.text) + 1
    return len(words)


def _to_full_stop(words: Sequence[Token]) -> list[Token]:
    """The words up to the one that ends the sentence; none if it does not end soon."""
    for i, tok in enumerate(words[:_MAX_REASON_WORDS]):
        if tok.text.endswith((".", ";")):
            return list(words[: i + 1])
    return []
