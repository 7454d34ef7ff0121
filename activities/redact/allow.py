"""The allow-list sweep: a redacted view keeps only the words known to be safe.

The detectors (``activities.redact.detect``) find what is known to identify: a
label's wording, a value's shape, a name of the lexicon. An unseen label or an
unlisted name passes them, and the check re-running them on the view cannot
see what they miss. So every view is also swept the other way round, on the
source's words for the plan and again on the view's re-read words in the check:

- ``digits``: every word bearing digits goes (IDs, dates, phones, postcodes,
  years, amounts), but a lone one-digit list number ("1", "2.", "(3)"); lone
  digits beside other lone characters (a comb field's boxes) go too.
- ``proper_noun``: every capitalised word (or all-caps one) goes unless it is
  known safe (``activities.redact.vocabulary``: a frequent English word and no
  given name, or a form's own word), and so does every word joined to one:
  a capitalised word beside it in the same phrase (a common surname beside an
  unknown given name), the capitalised words after a title or initials, name
  particles ("van der Berg", "bin Ahmad"), and a pair of title-case or all-caps
  words inside a sentence ("Grace Brown", "ROSE MILLS"), nearly always a name or
  a place.

A refusal or a black box is safe; a kept name is not, so the sweep prefers to
remove too much. Each hit carries what it prints, for the check to search.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from activities.redact.detect import Hit
from activities.redact.lines import Line, Tok
from activities.redact.vocabulary import PARTICLES, TITLES, common, form_word

#: The one number a page may keep: a lone digit as a list or page number prints it.
_FURNITURE = re.compile(r"[(\[]?\d[.):\],]?")
_INITIALS = re.compile(r"(?:[A-Z]\.){1,3}")
_PARTS = re.compile(r"[-'’]")
_EDGE = "\"'’“”()[]{}<>,;:.!?*"
_LONG_NUMBER = 7  # digits: a bare number this long is searched for in the view's bytes
_JOIN_GAP = 2.0  # word heights: further apart, two words are two cells of a grid


def sweep_words(lines: Sequence[Line], enabled: Sequence[str]) -> Iterator[Hit]:
    """The words of ``lines`` that are not known safe, as hits of the enabled sweeps."""
    digits = "digits" in enabled
    combed = {id(tok) for line in lines for tok in _comb(line.tokens)} if digits else set()
    # A name the line's end cut ("... her partner, Ngaire" / "Brook. What I ..."): the
    # words it wraps onto are the name's still, though they start a line.
    open_name = False
    for line in lines:
        phrases = line.phrases()
        for n, phrase in enumerate(phrases):
            toks = phrase.tokens
            if digits:
                for tok in toks:
                    if numeric(tok.text) or id(tok) in combed:
                        yield Hit((tok,), "sweep", "digits", _searchable(tok.text.strip(_EDGE)))
            if "proper_noun" in enabled:
                marked = _marks(toks) | (_wrapped(toks) if n == 0 and open_name else set())
                yield from _runs(toks, marked, _starts_of(toks))
                if n == len(phrases) - 1:
                    open_name = _ends_open(toks, marked)


#: Words of a name a line's end may carry onto the next line's start.
_WRAP_WORDS = 3
#: What ends a word that closes a name: a sentence's, a clause's or a label's mark.
_SHUT = (".", ",", ";", ":", "!", "?", ")")


def _ends_open(toks: Sequence[Tok], marked: set[int]) -> bool:
    """Whether the phrase ends inside a name: its last word removed (or a title, or
    initials) and no punctuation closing it."""
    if not toks:
        return False
    last = len(toks) - 1
    word = toks[last].text
    bare = word.strip(_EDGE).lower()
    named = last in marked or bare in TITLES
    shut = word.endswith(_SHUT)
    return named and (not shut or bare in TITLES or bool(_INITIALS.fullmatch(word)))


def _wrapped(toks: Sequence[Tok]) -> set[int]:
    """The first capitalised words of a line a name was cut onto, up to the first that
    closes it or is a label's or a form's own word."""
    taken: set[int] = set()
    for i, tok in enumerate(toks[:_WRAP_WORDS]):
        word = tok.text.strip(_EDGE)
        if not word or not _capital(word) or tok.text.endswith(":") or form_word(word):
            break
        taken.add(i)
        if tok.text.endswith(_SHUT):
            break
    return taken


def _searchable(text: str) -> tuple[str, ...]:
    """The string the check searches the view's bytes for: an identifier with a letter, or a
    long number. A short bare number (a price, a year) is no string to search a PDF's streams
    for (their coordinates hold every four digits); the check's own digit sweep still finds
    it wherever the view prints it."""
    bare = re.sub(r"[^0-9A-Za-z]", "", text)
    return (text,) if not bare.isdigit() or len(bare) >= _LONG_NUMBER else ()


def _comb(toks: Sequence[Tok]) -> Iterator[Tok]:
    """Lone digits beside another lone character on their line: a number written one
    character to a box (a form's comb field), which reads whole however far apart the
    boxes are; a list number stands beside words, not beside another digit."""
    alone = [len(t.text.strip(_EDGE)) == 1 and t.text.strip(_EDGE).isalnum() for t in toks]
    for i, tok in enumerate(toks):
        beside = (i > 0 and alone[i - 1]) or (i + 1 < len(toks) and alone[i + 1])
        if alone[i] and beside and tok.text.strip(_EDGE).isdigit():
            yield tok


def numeric(text: str) -> bool:
    """Whether a word bears digits that could identify: two or more, or one among letters
    or separators; a lone list number does not."""
    digits = sum(c.isdigit() for c in text)
    return digits >= 2 or (digits == 1 and not _FURNITURE.fullmatch(text))


def _marks(toks: Sequence[Tok]) -> set[int]:
    """The indices of the phrase's words that go: unsafe ones, then the words joined to them."""
    words = [t.text.strip(_EDGE) or t.text for t in toks]
    marked = {i for i, w in enumerate(words) if _unsafe(w, _starts(toks, i))}
    marked |= {i for i in range(1, len(words)) if _after_title(words, toks, i)}
    marked |= {i for i, t in enumerate(toks) if _INITIALS.fullmatch(t.text.strip(",;:"))}
    marked |= {i for i in range(1, len(words)) if _after_particle(words, i)}
    marked |= _pairs(words, toks)
    grown = True
    while grown:
        joined = {j for i in marked for j in (i - 1, i + 1) if _joins(words, toks, i, j)}
        grown = not joined <= marked
        marked |= joined
    return marked


def _unsafe(word: str, start: bool) -> bool:
    """A capitalised word that is neither a form word nor a frequent non-name word."""
    if not _capital(word) or form_word(word) or word.lower() in TITLES:
        return False
    if re.search(r"[a-z][A-Z]", word):  # McDonald, DeShawn: a name's own capitals
        return True
    parts = [p for p in _PARTS.split(word) if p]
    return any(p[0].isupper() and not common(p, start) for p in parts if p.isalpha()) or any(
        not p.isalpha() and not numeric(p) for p in parts
    )


def _capital(word: str) -> bool:
    return any(p[:1].isupper() for p in _PARTS.split(word))


def _starts(toks: Sequence[Tok], i: int) -> bool:
    """Whether word ``i`` starts its line or a sentence (the word before ends one)."""
    if i == 0:
        return True
    before = toks[i - 1].text
    bare = before.rstrip(".").lower()
    return (
        before.endswith((".", "!", "?")) and bare not in TITLES and not _INITIALS.fullmatch(before)
    )


def _after_title(words: Sequence[str], toks: Sequence[Tok], i: int) -> bool:
    prev = words[i - 1].rstrip(".").lower()
    return prev in TITLES and _capital(words[i]) and not _apart(toks, i - 1, i)


def _after_particle(words: Sequence[str], i: int) -> bool:
    """A capitalised word after a lower-case particle: "de la Rose", "bin Ahmad"."""
    prev = words[i - 1]
    return prev.islower() and prev in PARTICLES and _capital(words[i])


def _pairs(words: Sequence[str], toks: Sequence[Tok]) -> set[int]:
    """Two title-case or all-caps words side by side, no form word, one inside a sentence."""
    found: set[int] = set()
    for i in range(1, len(words)):
        a, b = words[i - 1], words[i]
        side_by_side = not _apart(toks, i - 1, i) and not _boundary(toks[i - 1])
        inside = not (_starts(toks, i - 1) and _starts(toks, i))
        names = _named(a) and _named(b) and not (form_word(a) or form_word(b))
        if names and side_by_side and inside:
            found |= {i - 1, i}
    return found


def _named(word: str) -> bool:
    """Title case or all caps: how a form prints a name ("Rose Mills", "ROSE MILLS")."""
    return _title(word) or (word.isupper() and word.isalpha() and len(word) > 1)


def _title(word: str) -> bool:
    return word[:1].isupper() and word[1:].islower() and word.isalpha()


def _joins(words: Sequence[str], toks: Sequence[Tok], i: int, j: int) -> bool:
    """Whether word ``j``, beside marked word ``i``, is part of the same name."""
    if not 0 <= j < len(words) or _apart(toks, min(i, j), max(i, j)):
        return False
    if _boundary(toks[min(i, j)]):
        return False
    word = words[j]
    if word.lower() in PARTICLES:
        return True
    return _capital(word) and not form_word(word) and word.lower() not in TITLES


def _boundary(tok: Tok) -> bool:
    """A word after which a name does not go on: a label's colon, a clause's end."""
    return tok.text.endswith((":", ";", "!", "?")) or (
        tok.text.endswith(".") and not _INITIALS.fullmatch(tok.text) and len(tok.text) > 3
    )


def _apart(toks: Sequence[Tok], a: int, b: int) -> bool:
    return toks[b].x0 - toks[a].x1 > _JOIN_GAP * toks[b].height


def _starts_of(toks: Sequence[Tok]) -> list[bool]:
    return [_starts(toks, i) for i in range(len(toks))]


def _runs(toks: Sequence[Tok], marked: set[int], starts: Sequence[bool]) -> Iterator[Hit]:
    """Consecutive marked words as one hit each. It prints the run, each word not known
    safe, and each title-case word of it ("Brown" beside a removed given name, to be found
    again alone); a common all-caps word joined to a run (a receipt's "COLORS") is no string
    of its own: PDF syntax is full of them, and the check would find it there."""
    run: list[int] = []
    for i in [*range(len(toks)), len(toks)]:
        if i in marked:
            run.append(i)
            continue
        if run:
            words = [toks[n].text.strip(_EDGE) for n in run]
            own = [w for n, w in zip(run, words, strict=True) if _own(w, starts[n])]
            strings = (" ".join(words), *(p for p in own if len(p) >= 3))
            yield Hit(tuple(toks[n] for n in run), "sweep", "proper_noun", strings)
        run = []


def _own(word: str, start: bool) -> bool:
    return _unsafe(word, start) or _title(word) or not word.isupper()
