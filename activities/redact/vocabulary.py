"""The words a redacted view may keep capitalised: frequent English words that are no name.

The allow-list sweep (``activities.redact.allow``) keeps a capitalised word
only when it is known safe, so this module says what is known: the frequent
words of the English list that ships inside ``pyspellchecker`` (read from the
installed package, never downloaded), less every given name of the lexicon
(the list is counted from subtitles, so it is full of first names), and a
short list of a form's and a clinic's own words the list ranks low or spells
the American way ("Referral", "Centre", "MRN").

Two depths of the list: a capitalised word inside a sentence must be among
the ``_MID_RANK`` most frequent (surnames such as Morgan, Wilson or Smith rank
lower than ordinary words there), the first word of a line or sentence among
the ``_START_RANK`` (it is capitalised because it starts, not because it names).
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from importlib.resources import files

from activities.redact.lexicon import GIVEN_NAMES

_MID_RANK = 20_000
_START_RANK = 40_000


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: A form's, a letter's and a clinic's words the list misses or ranks low.
FORM_WORDS = _set(
    """
    referral referrals referring referred participant participants clinician clinicians consent
    consents consented patient patients patient's mrn dob d.o.b nhs gp gps id ids no nos ref
    re tel fax e-mail email mob ph dept department outpatient outpatients inpatient clinic
    centre center hospital ward unit surgery practice medical health diagnosis diagnoses
    symptoms symptom history medication medications allergy allergies assessment impression
    investigations examination review follow-up followup summary discharge admission
    urgent routine priority reason reasons date dates birth name names surname forename
    given identifier identifiers number address postcode zip phone signature signed
    cardiology oncology neurology dermatology radiology pathology haematology hematology
    gastroenterology respiratory rheumatology urology nephrology endocrinology orthopaedics
    orthopedics ophthalmology paediatrics pediatrics psychiatry physiotherapy obstetrics
    gynaecology geriatrics hypertension diabetes asthma copd ecg mri ct x-ray ultrasound
    shortness breath chest pain intermittent persistent recurrent chronic acute numbness
    headache headaches dizziness palpitations fatigue cough rash lesion swelling fever
    yes page of sincerely regards faithfully dear yours kind thank thanks please
    colour harbour behaviour programme organisation licence anaesthetic paediatric
    orthopaedic haematology realise
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    monday tuesday wednesday thursday friday saturday sunday
    total subtotal tax invoice receipt cash change amount qty price item items rounding
    gst sst rm
    dr mr mrs ms miss prof
    """
)
#: Titles: the capitalised words after one are a person's name.
TITLES = _set("dr mr mrs ms mx miss prof sister nurse rev revd sir dame lady lord fr pastor")
#: Name particles: joined to the name beside them ("van der Berg", "bin Ahmad", "al-Rashid").
PARTICLES = _set(
    "van der den de la le du di da dos das del della von zu ter ten bin binti bint ibn al el"
    " ap mc mac st"
)


def common(word: str, start: bool = False) -> bool:
    """Whether ``word`` (any case) is a frequent English word and no given name; a line's or
    sentence's first word (``start``) may be a rarer one."""
    rank = _ranks().get(word.lower())
    return rank is not None and rank < (_START_RANK if start else _MID_RANK)


def form_word(word: str) -> bool:
    return word.lower() in FORM_WORDS


@lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    """Each frequent word's rank in the packaged English list, the lexicon's names left out."""
    raw = (files("spellchecker") / "resources" / "en.json.gz").read_bytes()
    counts: dict[str, int] = json.loads(gzip.decompress(raw))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:_START_RANK]
    return {word: n for n, (word, _) in enumerate(ordered) if word not in GIVEN_NAMES}
