"""Names where names stand: the words in a person's slot go, however common they are.

The sweep (``activities.redact.allow``) keeps a capitalised word that is a
frequent English word, and the lexicon (``activities.redact.names``) finds a
name by its given name; a name made of common words ("Grant Field", "Page")
passes both. But a form, a letter and a signature put a name in a few places,
and there whatever capitalised words stand are a name:

- after a **title** (Dr, Mrs, Prof, Sister, Nurse ...), the title going with it, on its
  line or, where the line ends at the title ("... his partner, Dr."), at the start of
  the line just below it;
- after a **person's label**: a label ending in a colon that names a role
  (``Clinician in charge:``, ``Usual GP:``, ``Referred by:``, ``cc:``, ``To:``),
  or a participle's "by" ("Referred by", "Seen by");
- after a **sign-off** or a **salutation** ("Yours sincerely,", "Regards,",
  "Signed", "per", "Dear"), on its line or, where the line ends there, at the
  start of the line just below it (a signature block);
- before **credentials** ("Grant Field MBBS FRCP", "Page, RN").

The slot's words are one to six capitalised words, initials, titles at its
start and lower-case particles inside, in either order ("Field, Grant"),
in any case ("GRANT FIELD"). They end at a word in lower case, a label's
colon, a sentence's end, a phrase gap, or a word that says the name is over (a
role, a place's or an organisation's word: "Consultant", "Clinic"). A slot of
generic addressees ("Dear Sir", "Dear Colleague") or of titles and initials
alone (what OCR makes of a painted box) holds no name.

The same rules run in the check on the view's re-read words
(``activities.redact.scan``), so a name the plan left in a slot is found there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from activities.redact.lines import Line, Tok
from activities.redact.vocabulary import FORM_WORDS, PARTICLES, TITLES


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: A label naming one of these is a person's label: its value is a name.
ROLES = _set(
    """
    clinician clinicians physician physicians provider doctor doctors nurse nurses attending gp
    consultant consultants surgeon surgeons registrar practitioner specialist referrer referee
    therapist midwife pharmacist author signatory witness signature signed sender recipient
    reviewer examiner requester contact keyworker caseworker carer coordinator radiologist
    cardiologist oncologist neurologist psychiatrist psychologist dentist optometrist
    physiotherapist paramedic dietitian counsellor counselor
    """
) | _set(
    # Kin and those who stand in for a patient: "Next of kin: Rose O'Hare" left a
    # relative's name readable in a view marked clean (a person's label like any role).
    """
    kin nok next-of-kin relative relation spouse partner husband wife mother father parent
    son daughter brother sibling guardian grandparent grandmother grandfather
    """
)
#: A label that starts with one of these names a person too ("To:", "cc:", "Copy to:").
_ADDRESSED = _set("to from cc attn attention copy copies")
#: Words after which, on the same line or the next, a letter puts its writer's or reader's name.
SIGN_OFFS = _set("sincerely regards faithfully truly wishes thanks signed per pp p.p. cc dear")
#: Sign-offs that are ordinary words in prose ("as per protocol"): only at a phrase's start.
_LEADING = _set("signed per pp p.p. cc dear")
#: Past participles not ending in -ed, as before "by" ("Seen by", "Written by").
_IRREGULAR = _set("seen written done given taken drawn undertaken overseen read sent")
#: A form's own words that are surnames too: a slot's word all the same ("Clinician: Page").
_SURNAMES = _set("page ward price may june august cash given change chase")
#: Words that are nobody's name where a name would stand: roles, generic addressees
#: ("Dear Sir", "Dear Colleague"), an organisation's and a form's own words, a
#: sentence's small words.
_NO_NAMES = (
    ROLES
    | _set(
        """
    sir sirs madam madame colleague colleagues team all whom concern friend friends parent parents
    guardian family patient patients participant referral date birth reason consent yes no
    n/a na none unknown mrn dob id number dear yours sincerely regards
    the a an and of for to from at in on with by or
    clinic hospital medical centre center health practice surgery community trust services
    service department dept unit nhs records office reception
    """
    )
    | (FORM_WORDS - _SURNAMES)
)
#: Words that end a name once it has begun: a place's, a clinic's or an organisation's.
_ENDS = _NO_NAMES | _set(
    """
    street road avenue lane drive way place close court square mews crescent terrace
    group ward partnership associates foundation
    """
)
#: Letters after a name that say a person's qualifications.
CREDENTIALS = _set(
    """
    MD RN NP PA-C MBBS MBChB MBBCh BMBS FRCP FRCS FRCPath FRCR FRCGP FRCOG FRCPC FRACP MRCP MRCS
    MRCGP MRCPCH PhD DPhil MSc BSc BMedSci DNP APRN FNP LPN CNS CNM RGN RMN DDS DMD PharmD FACP
    FACS MPH DCH DRCOG MBA
    """
)
#: Credentials that spell a common word too: one only after a comma ("Page, DO").
_AMBIGUOUS = _set("DO PA MA BA BS MB BM RM")
_CREDENTIALS_UPPER = frozenset(c.upper() for c in CREDENTIALS)
_EDGE = "\"'’“”()[]{}<>,;:.!?*"
_INITIAL = re.compile(r"[A-Z]\.?(?:[A-Z]\.?){0,2}")
_MAX_WORDS = 6
_BELOW = 1.5  # word heights between a sign-off's line and the name's line under it
_ALIGNED = 2.0  # word heights: how far the name's line may start from the sign-off's


def slotted(lines: Sequence[Line]) -> Iterator[tuple[Line, int, int]]:
    """Each name in a name's slot: its phrase and the span in the phrase's text."""
    for n, line in enumerate(lines):
        for phrase in line.phrases():
            toks = phrase.tokens
            for start, first in _openers(toks):
                if first < len(toks):
                    end = _run(toks, first)
                    yield from _span(phrase, start if end > first else end, end)
                else:  # a label, sign-off or title ending its phrase: the name is below
                    below = _below(lines, n, phrase)
                    end = _run(below.tokens, 0) if below is not None else 0
                    if below is not None and end:
                        yield from _span(below, 0, end)
                        yield from _span(phrase, start, first)  # a title goes with it
            for k in _credentials(toks):
                yield from _span(phrase, _before(toks, k), k)


def _openers(toks: Sequence[Tok]) -> Iterator[tuple[int, int]]:
    """Where each slot opens: the index its hit starts at (a title goes with its name) and
    the index of the slot's first word."""
    for i, tok in enumerate(toks):
        word = tok.text
        if word.endswith(":"):
            if _person_label(toks, i):
                yield i + 1, i + 1
        elif _title(word):
            yield i, i + 1
        elif _opens(toks, i):
            yield i + 1, i + 1


def _opens(toks: Sequence[Tok], i: int) -> bool:
    """Whether word ``i`` is a participle's "by" or a sign-off (some only leading)."""
    bare = _bare(toks[i].text)
    if bare == "by":
        return i > 0 and _participle(_bare(toks[i - 1].text))
    return bare in SIGN_OFFS and (i == 0 or bare not in _LEADING)


def _participle(word: str) -> bool:
    """A verb's past participle, as before the "by" that names who did it ("Seen by")."""
    return word.endswith("ed") or word in _IRREGULAR


def _person_label(toks: Sequence[Tok], i: int) -> bool:
    """Whether the label ending at word ``i`` (its colon) names a person: a role's word in
    it ("Clinician in charge:"), an addressee's first ("Copy to:") or a "by" last."""
    words: list[str] = []
    for tok in reversed(toks[: i + 1]):
        if len(words) == 4 or (words and tok.text.endswith((":", ";", ".", ","))):
            break
        if _bare(tok.text):
            words.append(_bare(tok.text))
    return bool(words) and (
        any(w in ROLES for w in words) or words[-1] in _ADDRESSED or words[0] == "by"
    )


def _run(toks: Sequence[Tok], first: int) -> int:
    """Where the slot's name, from word ``first``, ends (``first``: it holds no name)."""
    end, named = first, False
    for k in range(first, min(len(toks), first + _MAX_WORDS)):
        word, bare = toks[k].text, _bare(toks[k].text)
        if not bare or word.endswith(":") or _credential(toks, k):
            break
        if _title(word) and not named:
            end = k + 1
        elif _initials(word):
            # Before the small words: "A." is an initial, not the article (initials
            # alone make no name, so "To: A team" still holds none).
            end = k + 1
        elif bare in (_ENDS if named else _NO_NAMES) or not word[:1].isupper():
            if not (word.islower() and _unaccented(bare) in PARTICLES):
                break  # a particle is joined to the name after it, if one follows
        else:
            end, named = k + 1, True
        if _closes(word):
            break
    return end if named else first


def _initials(word: str) -> bool:
    """One to three capitals with their dots ("L.", "L.R.") or one alone ("J"): initials."""
    bare = word.strip(",;")
    return bool(_INITIAL.fullmatch(bare)) and (len(bare.strip(".")) == 1 or "." in bare)


def _closes(word: str) -> bool:
    """A word after which the name does not go on: a clause's or sentence's end."""
    if word.endswith((";", "!", "?")):
        return True
    return word.endswith(".") and not _initials(word) and not _title(word)


def _credentials(toks: Sequence[Tok]) -> Iterator[int]:
    """The first credential of each run of them (the name stands before it)."""
    for k in range(1, len(toks)):
        if _credential(toks, k) and not _credential(toks, k - 1):
            yield k


def _credential(toks: Sequence[Tok], k: int) -> bool:
    word = toks[k].text.strip(_EDGE)
    bare = word.replace(".", "")
    if bare in CREDENTIALS or (word.isupper() and bare in _CREDENTIALS_UPPER):
        return True
    return bare in _AMBIGUOUS and k > 0 and toks[k - 1].text.endswith(",")


def _before(toks: Sequence[Tok], k: int) -> int:
    """Where the name right before credential ``k`` starts (``k``: there is none)."""
    start, named = k, False
    for i in range(k - 1, max(-1, k - 1 - _MAX_WORDS), -1):
        word, bare = toks[i].text, _bare(toks[i].text)
        if not bare or word.endswith(":") or (i < k - 1 and _closes(word)):
            break
        if _title(word) or _initials(word) or (word.islower() and bare in PARTICLES):
            start = i
        elif word[:1].isupper() and bare not in _ENDS:
            start, named = i, True
        else:
            break
    return start if named else k


def _below(lines: Sequence[Line], n: int, phrase: Line) -> Line | None:
    """The first phrase of the line just under ``phrase``, if it starts where it does."""
    first, bottom = phrase.tokens[0], max(t.y1 for t in phrase.tokens)
    for line in lines[n + 1 :]:
        top = line.tokens[0]
        gap = min(t.y0 for t in line.tokens) - bottom
        if top.page != first.page or gap > _BELOW * first.height:
            return None
        if abs(top.x0 - first.x0) <= _ALIGNED * first.height:
            return line.phrases()[0]
    return None


def _span(phrase: Line, start: int, end: int) -> Iterator[tuple[Line, int, int]]:
    if end > start:
        spans = phrase.spans()
        yield phrase, spans[start][0], spans[end - 1][1]


def _title(word: str) -> bool:
    return word[:1].isupper() and _bare(word) in TITLES


def _unaccented(word: str) -> str:
    """The word without its diacritics: OCR reads a particle's "n" as "ņ" ("teņ Brink")."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _bare(word: str) -> str:
    return word.strip(_EDGE).lower()
