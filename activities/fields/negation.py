"""Whether a sentence or a box's statement gives consent, refuses it, or says nothing sure.

The method is NegEx (Chapman et al., 2001): a target phrase, negation
triggers within a window of words before it (``_BEFORE``: "declined",
"does not") or after it (``_AFTER``: "has NOT been given", "withdrawn"),
and terminators ("but", "however", a full stop) that end a trigger's reach.
It was chosen by measurement over medspaCy's ConText (../shared/notes,
facts round 3, section 1): on the probe sentences a plain NegEx rule list
with consent's own triggers gave exactly the column medspaCy gave with two
added consent rules and negspacy with four terms, while medspaCy's shipped
rules missed "NOT been given" and "withdrawn", and medspaCy would add about
257 MB and pin spaCy below 3.8 (its sentence splitter also logs document text
at DEBUG). One concept needs no pipeline.

Consent has no single word: "happy for us to share", "agreed to the
sharing", "permission" are targets as much as "consent". Where NegEx itself
is known to fail, the answer is *unsure*, never a guess: two negations on one
target ("did not decline") and a sentence with targets of both polarities
give ``None``, and so does a sentence with no target at all.
"""

from __future__ import annotations

import re

# "consent" may have a word run into it by OCR ("Iconsent"), so no boundary before it.
_TARGET = re.compile(
    r"consent\w*|\bagree\w*|\bhappy\s+(?:for\s+\w+\s+)?to\s+share|\bpermission"
    r"|\bwish\w*\s+(?:for\s+)?(?:\w+\s+){0,3}to\s+be\s+shared|\bauthori[sz]\w*"
)
#: Negation triggers before a target, within _WINDOW words.
_BEFORE = re.compile(
    r"\b(?:no|not|never|without|cannot|neither|nor|declin\w*|refus\w*|withh[eo]ld\w*|"
    r"withdr[ae]w\w*|den(?:y|ies|ied)|revok\w*|unwilling|unable|objects?|objected)\b|n't\b"
)
#: Negation triggers after a target, within _WINDOW words.
_AFTER = re.compile(
    r"\b(?:not|never|declin\w*|refus\w*|withh[eo]ld\w*|withdr[ae]w\w*|denied|revoked|"
    r"absent|lacking)\b|n't\b"
)
_TERMINATORS = re.compile(r"\b(?:but|however|although|though|except|whereas)\b|[.;]")
_WINDOW = 6


def speaks_of_consent(text: str) -> bool:
    """Whether the text holds any consent wording at all."""
    return _TARGET.search(text.lower()) is not None


def polarity(text: str) -> bool | None:
    """True: the text gives consent; False: it refuses or denies it; None: no sure answer."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    verdicts = {_verdict(lowered, m) for m in _TARGET.finditer(lowered)}
    if not verdicts or None in verdicts or len(verdicts) > 1:
        return None
    return verdicts.pop()


def deciding(text: str) -> list[int]:
    """The indexes of the words (split on spaces) the answer rests on: each consent
    wording and the words within a trigger's reach of it. A misread elsewhere
    in the sentence cannot change the answer; one here can."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    starts = [m.start() for m in re.finditer(r"\S+", lowered)]
    found: set[int] = set()
    for target in _TARGET.finditer(lowered):
        before = _clause_before(lowered[: target.start()]).split()
        after = _clause_after(lowered[target.end() :]).split()
        first = sum(1 for s in starts if s < target.start()) - len(before)
        last = sum(1 for s in starts if s < target.end()) + len(after)
        found.update(range(max(0, first), min(len(starts), last)))
    return sorted(found)


def _verdict(text: str, target: re.Match[str]) -> bool | None:
    glued = re.search(r"[a-z']*$", text[: target.start()])
    if glued and glued.group() not in ("", "i", "a", "the"):
        return None  # "notconsent": a word OCR ran into the target may be a negation
    before = _clause_before(text[: target.start()])
    after = _clause_after(text[target.end() :])
    cues = len(_BEFORE.findall(before)) + len(_AFTER.findall(after))
    if cues >= 2:
        return None  # "did not decline": NegEx reads a double negation wrong, so nobody guesses
    return cues == 0


def _clause_before(text: str) -> str:
    """The words before the target back to a terminator, at most _WINDOW of them."""
    parts = _TERMINATORS.split(text)
    return " ".join(parts[-1].split()[-_WINDOW:])


def _clause_after(text: str) -> str:
    parts = _TERMINATORS.split(text)
    return " ".join(parts[0].split()[:_WINDOW])
