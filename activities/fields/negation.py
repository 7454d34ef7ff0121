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

NegEx answers only whether a target is negated; "not negated" is not "given".
ConText (Harkema et al., 2009) adds what NegEx leaves out, and so does this
module, because each was a consent read as given on a sentence that gives
none: a target must be **affirmed** to be true ("given", "obtained",
"agreed", "happy to", or a verb of consent with its subject: "she consents",
"I consent"; "Consent form enclosed." affirms nothing); a **hypothetical or
uncertain** cue anywhere in the sentence ("pending", "will be sought", "if",
"whether", "lacks capacity", "yet") leaves it unsure; and a refusal beyond the
window is a refusal when it is the clause's own verb and nothing there affirms
("Permission to pass these notes on was refused."), and leaves a "yes" unsure
anywhere else in the sentence ("consented, but later withdrew"), never true.
A ticked box's statement is affirmed by its tick (``ticked=True``), so only the
last two rules apply to it.
"""

from __future__ import annotations

import re

# "consent" may have a word run into it by OCR ("Iconsent"), so no boundary before it.
_TARGET = re.compile(
    r"consent\w*|\bagree\w*|\bpermission"
    r"|\bhappy\s+(?:for\s+(?:\w+\s+){1,4})?to\s+(?:share|see|receive|contact|access|use|have)"
    r"|\bopt(?:s|ed)?[- ]?out\b|\bto\s+be\s+contacted\b"
    r"|\bshar(?:e|ing)\s+(?:of\s+)?(?:his|her|their)\s+(?:records|details|notes|information|data)\b"
    r"|\bwish\w*\s+(?:for\s+)?(?:\w+\s+){0,3}to\s+be\s+shared|\bauthori[sz]\w*"
)
#: Negation triggers before a target, within _WINDOW words.
_BEFORE = re.compile(
    r"\b(?:no|not|never|without|cannot|neither|nor|declin\w*|refus\w*|withh[eo]ld\w*|"
    r"withdr[ae]w\w*|den(?:y|ies|ied)|revok\w*|unwilling|unable|objects?|objected|"
    r"opt(?:s|ed)?[- ]?out)\b|n't\b"
)
#: Negation triggers after a target, within _WINDOW words.
_AFTER = re.compile(
    r"\b(?:not|never|declin\w*|refus\w*|withh[eo]ld\w*|withdr[ae]w\w*|denied|revoked|"
    r"absent|lacking|opt(?:s|ed)?[- ]?out)\b|n't\b"
)
#: Refusals of consent itself: anywhere in a sentence, they leave a "yes" unsure.
_REFUSALS = re.compile(
    r"\b(?:declin\w*|refus\w*|withh[eo]ld\w*|withdr[ae]w\w*|den(?:y|ies|ied)|revok\w*|"
    r"unwilling|objects?|objected|opt(?:s|ed)?[- ]?out)\b"
)
#: ConText's hypothetical and uncertain cues: anywhere in a sentence, no answer is sure.
_UNSURE = re.compile(
    r"\b(?:pending|await\w*|yet|will|would|shall|should|must|might|could|if|whether|unless|"
    r"once|until|unknown|unclear|unsure|uncertain|undecided|sought|seek\w*|ask(?:ed|ing)?|"
    r"request\w*|tbc|tbd|n/a|capacity|please|needs?|needed|required|"
    r"to\s+be\s+(?:sought|obtained|confirmed|discussed|taken|checked|agreed|signed|given|"
    r"completed|arranged))\b|\?"
)
#: What affirms a target: said within the target's clause, before or after it.
_AFFIRMS = re.compile(
    r"\b(?:given|gave|gives|obtained|granted|grants|provided|signed|documented|recorded|"
    r"confirmed|received|agreed|agrees|accepts|accepted|happy|willing|content|keen|yes|"
    r"approved|on\s+file|in\s+place)\b"
)
#: A target that affirms by itself: a verb of consent, or one with its subject before it.
_AFFIRMING_TARGET = re.compile(
    r"consent(?:s|ed)|agree\w*|happy\b.*|wish\w*.*|authori[sz](?:es|ed)|authori[sz]ation"
)
_SUBJECTS = ("i", "we", "patient", "participant", "he", "she", "they", "parent", "guardian")
_TERMINATORS = re.compile(r"\b(?:but|however|although|though|except|whereas)\b|[.;]")
_WINDOW = 6


def speaks_of_consent(text: str) -> bool:
    """Whether the text holds any consent wording at all."""
    return _TARGET.search(text.lower()) is not None


def polarity(text: str, *, ticked: bool = False) -> bool | None:
    """True: the text gives consent; False: it refuses or denies it; None: no sure answer.

    ``ticked``: the text is a box's statement and the box is marked, so the tick is
    what affirms it; a sentence must affirm consent in its own words.
    """
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    verdicts = set()
    for sentence in _sentences(lowered):
        found = [_verdict(sentence, m, ticked) for m in _TARGET.finditer(sentence)]
        if found and _UNSURE.search(sentence):
            return None  # "Consent will be sought", "if she consents": no answer yet
        verdicts.update(found)
    if not verdicts or None in verdicts or len(verdicts) > 1:
        return None
    return verdicts.pop()


def _sentences(text: str) -> list[str]:
    """The text cut at full stops and semicolons (a date's dots and "N/A" stay whole)."""
    return [part for part in re.split(r"(?<![0-9])[.;!](?![0-9a-z])", text) if part.strip()]


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


def _verdict(text: str, target: re.Match[str], ticked: bool) -> bool | None:
    """One target in one sentence: negated (False), affirmed (True), else unsure (None)."""
    glued = re.search(r"[a-z']*$", text[: target.start()])
    if glued and glued.group() not in ("", "i", "a", "the"):
        return None  # "notconsent": a word OCR ran into the target may be a negation
    before = _clause_before(text[: target.start()])
    after = _clause_after(text[target.end() :])
    cues = len(_BEFORE.findall(before)) + len(_AFTER.findall(after))
    if cues >= 2:
        return None  # "did not decline": NegEx reads a double negation wrong, so nobody guesses
    if _REFUSALS.fullmatch(target.group()):
        return False if cues == 0 else None  # "opted out" refuses; "did not opt out" is unsure
    if cues == 1:
        return False
    rest = _clause_after(text[target.end() :], None)
    clause = f"{_clause_before(text[: target.start()], None)} {rest}"
    affirmed = _affirmed(target, glued.group() if glued else "", before, after)
    if _REFUSALS.search(rest) and not affirmed:
        # "Permission to pass these notes on was refused": the clause's verb refuses what
        # it names, however far after; after "consented", it is a conflict (below)
        return False
    if _AFTER.search(clause) or _BEFORE.search(clause) or _REFUSALS.search(text):
        return None  # a refusal out of the window's reach, or in the sentence's other clause
    if ticked or affirmed:
        return True
    return None  # "Consent form enclosed.": consent named, never given


def _affirmed(target: re.Match[str], glued: str, before: str, after: str) -> bool:
    """Whether the target's own words, or its clause within the window, affirm it."""
    subject = before.split()[-1] if before.split() else ""
    verb = _AFFIRMING_TARGET.fullmatch(target.group()) is not None
    said = glued == "i" or (subject in _SUBJECTS and target.group().startswith("consent"))
    return verb or said or _AFFIRMS.search(f"{before} {after}") is not None


def _clause_before(text: str, window: int | None = _WINDOW) -> str:
    """The words before the target back to a terminator, at most ``window`` of them."""
    words = _TERMINATORS.split(text)[-1].split()
    return " ".join(words[-window:] if window else words)


def _clause_after(text: str, window: int | None = _WINDOW) -> str:
    words = _TERMINATORS.split(text)[0].split()
    return " ".join(words[:window] if window else words)
