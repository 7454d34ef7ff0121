"""Free text checked word by word: a name or an address has no grammar to catch a misread.

OCR is often sure of a word it misread ("Restäurants", "J1n", "Setangor"
all at 0.99), so its confidence alone cannot let free text through. Each
word is checked here: an accented letter in a Malaysian receipt, a digit
between letters, or a stray letter after a stop is repaired only when the
repair is a word we know (the vocabulary below), and is doubt otherwise. A
known word is corroborated by the vocabulary, so OCR's low confidence in it
does not count; any other word is only as sure as OCR was.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from activities.fields.layout import Token
from activities.fields.normalise import edit_distance


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Malaysian states and federal territories: an address ends with one.
STATES = _words(
    "SELANGOR KUALA LUMPUR MALAYSIA JOHOR PENANG PULAU PINANG PERAK KEDAH MELAKA NEGERI "
    "SEMBILAN PAHANG KELANTAN TERENGGANU SABAH SARAWAK PERLIS PUTRAJAYA LABUAN"
)
#: Words Malaysian addresses are made of: street kinds, their short forms, towns.
ADDRESS_WORDS = STATES | _words(
    "JALAN JLN LORONG LRG TAMAN TMN PERSIARAN LEBUH LEBUHRAYA BANDAR BDR DESA KAMPUNG KG "
    "BUKIT BATU SUNGAI SG SEKSYEN LOT NO LEVEL TINGKAT BANGUNAN WISMA PLAZA KOMPLEKS PUSAT "
    "MEDAN JAYA BARU UTAMA INDAH SETIA PERDANA DAMAI ALAM SERI SRI PUTRA RAJA TUN DATO "
    "DATUK TUANKU SULTAN HQ GROUND FLOOR BLOCK BLOK UNIT SUITE SHOP KAWASAN PERINDUSTRIAN "
    "INDUSTRIAL PARK SQUARE CENTRE CENTER MALL PETALING SHAH KLANG SUBANG PUCHONG "
    "CHERAS KAJANG AMPANG SEMENYIH RAWANG SELAYANG DAMANSARA KEPONG SETAPAK SENTUL BANGSAR "
    "PUDU BANGI SERDANG KEMBANGAN CYBERJAYA BAHRU IPOH SEREMBAN KUANTAN SKUDAI NILAI"
)
#: Words shop names are made of.
BUSINESS_WORDS = _words(
    "SDN BHD BERHAD ENTERPRISE TRADING RESTAURANT RESTAURANTS SHOP MARKET STORE STATIONERY "
    "HARDWARE MART CAFE BAKERY PHARMACY KEDAI SUPERMARKET RESTORAN BOOK BOOKS MINI"
)
_CONFUSED = str.maketrans({"1": "L", "0": "O", "5": "S"})
#: A digit OCR read for a letter: between letters ("J1n", "G0LD").
_DIGIT_IN_WORD = re.compile(r"[A-Za-z][015]+[A-Za-z]")
_DIGITS_BETWEEN = re.compile(r"(?<=[A-Za-z])[015]+(?=[A-Za-z])")
#: A stray letter after a word's closing stop ("SELANGOR.O").
_STRAY = re.compile(r"^([A-Za-z]{3,}\.)[A-Za-z]$")


@dataclass(frozen=True)
class Checked:
    tokens: tuple[Token, ...]
    #: The weakest word's confidence, a known word counting as sure.
    confidence: float
    #: A word looked misread and no known word repairs it.
    doubt: bool


#: Whether a word (upper case, letters only) is one we know.
Known = Callable[[str], bool]


def check(tokens: Sequence[Token], vocabulary: Known) -> Checked:
    """``tokens`` with repairable misreads repaired, how sure they are, and any doubt left."""
    out, sure, doubt = [], 1.0, False
    for token in tokens:
        text, ok = _repaired(token.text, vocabulary)
        doubt = doubt or not ok
        if not _known(text, vocabulary):
            sure = min(sure, token.confidence)
        out.append(replace(token, text=text))
    return Checked(tuple(out), sure, doubt)


def english(word: str) -> bool:
    """An English word: pyspellchecker's list (160,000 words, shipped inside its wheel)."""
    return word.lower() in _english()


@cache
def _english() -> frozenset[str]:
    return frozenset(_checker().word_frequency.keys())


def misread(word: str) -> bool:
    """An unknown word one letter off a known one ("tigling"): a misread, OCR sure of it or
    not. A British spelling the list has in its American form ("apnoea", "haematuria",
    "oesophageal") is no misread, nor is a short word (too many words are a letter apart)."""
    bare = word.lower()
    if len(bare) < _MISREAD_LENGTH or english(bare):
        return False
    if english(bare.replace("oe", "e").replace("ae", "e")):
        return False
    checker = _checker()
    return bool(checker.known(checker.edit_distance_1(bare)))


_MISREAD_LENGTH = 5


@cache
def _checker() -> Any:
    from spellchecker import SpellChecker  # loaded once, on the first free text checked

    return SpellChecker(distance=1)


def near_state(word: str) -> str | None:
    """The one state a word is a letter off from ("Setangor"), if any."""
    upper = re.sub(r"[^A-Z]", "", word.upper())
    if len(upper) < 5 or upper in STATES:
        return None
    near = [s for s in STATES if len(s) >= 5 and edit_distance(upper, s) == 1]
    return near[0] if len(near) == 1 else None


def _repaired(text: str, vocabulary: Known) -> tuple[str, bool]:
    """The word repaired, and whether it is plausible (unchanged, or repaired to a known word)."""
    if not text.isascii():
        folded = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
        if not folded.isascii() or not _known(folded, vocabulary):
            return text, False
        text = folded
    if _DIGIT_IN_WORD.search(text):
        fixed = _DIGITS_BETWEEN.sub(_as_letters, text)
        if not _known(fixed, vocabulary):
            return text, False
        text = fixed
    stray = _STRAY.match(text)
    if stray:
        return (stray[1], True) if _known(stray[1], vocabulary) else (text, False)
    return text, True


def _as_letters(m: re.Match[str]) -> str:
    """The digits as the letters they resemble, in the case of the letter after them."""
    letters = m[0].translate(_CONFUSED)
    return letters.lower() if m.string[m.end()].islower() else letters


def _known(text: str, vocabulary: Known) -> bool:
    """Every run of letters in the word is a word we know ("7,Jln": "Jln")."""
    runs = re.findall(r"[A-Za-z]+", text)
    return bool(runs) and all(vocabulary(run.upper()) for run in runs)
