"""The seventh referral generator: its truth printed on its page, its distractors, its
marks, and each family's own ways (what it shares with the fourth to sixth, files,
layout, consent spread, conventions and wiring: test_referrals_blind.py)."""

from __future__ import annotations

import hashlib
import random
from datetime import date

from starter.bench import referrals_g_values as values
from starter.bench.referral_files import AS_PRINTED
from starter.bench.referrals_g import FAMILIES, ReferralG, drawn_for, generate
from starter.bench.referrals_g_page import Page, show_consent
from starter.bench.referrals_g_values import Consent

_PATIENT = {"patient_name", "date_of_birth", "participant_id", "clinician", "mrn"}
_DISTRACTORS = ("letter_date", "date_of_birth", "appointment", "other_id", "fax")


def _spoken() -> list[str]:
    """Every wording that speaks of consent: statements, questions and sentences (each
    sentence's longest run between its blanks)."""
    said = [w for pair in values.CONSENT_STATEMENTS for w in pair]
    said += [question for question, _ in values.CONSENT_QUESTIONS]
    for _, wordings in values.CONSENT_SENTENCES.values():
        said += [max(w.split("{who}"), key=len).strip(" .,") for w in wordings]
    return [w.casefold() for w in said]


def _unprinted(ref: ReferralG) -> list[str]:
    """The truth values ``ref``'s pages do not print (the date in its drawn style)."""
    day = date.fromisoformat(str(ref.truth["referral_date"]))
    wanted = {name: str(ref.truth[name]) for name in AS_PRINTED}
    wanted["referral_date"] = values.DATES[ref.meta["date_style"]](day)
    folded = ref.printed.casefold()
    return [name for name, value in wanted.items() if value.casefold() not in folded]


def _ink(page: Page, box: tuple[int, int, int, int]) -> int:
    """How many dark pixels ``box`` of ``page`` holds."""
    grey = page.image.convert("L").crop(box).tobytes()
    return sum(1 for v in grey if v < 128)


def test_referrals_g_truth_is_what_the_page_prints() -> None:
    """Every truth value but consent is printed on its page (the date in its style); the
    patient's identifiers are all found; no two people share a surname; a page with no
    consent speaks of it only as an unanswered question, and then only where it may."""
    refs = [generate(index, 9) for index in range(40)]
    spoken = _spoken()
    for ref in refs:
        assert not _unprinted(ref), (ref.stem, _unprinted(ref))
        assert set(ref.identifiers) >= _PATIENT, ref.stem
        names = ("patient_surname", "clinician_surname", "other_person_1", "other_person_2")
        assert len({ref.shown[k].split()[-1] for k in names}) == 4, ref.stem
    absent = [ref for ref in refs if ref.meta["consent_as"] == "absent"]
    assert len(absent) >= 2
    questions = [q.casefold() for q, _ in values.CONSENT_QUESTIONS]
    for ref in absent:
        said = [w for w in spoken if w in ref.printed.casefold()]
        blank = ref.meta["consent_blank"] == "true"
        assert all(w in questions for w in said) and bool(said) is blank, ref.stem
        assert not blank or ref.meta["layout"] != "clinic_note", ref.stem


def test_referrals_g_pages_carry_distractor_dates_numbers_and_people() -> None:
    """Each page prints the date it was typed or printed, the birth date, an appointment,
    another number, the clinic's fax, the GP and the typist, none of them the truth."""
    for index in range(15):
        ref = generate(index, 4)
        for name in (*_DISTRACTORS, "other_person_1", "other_person_2"):
            assert ref.shown[name] in ref.printed, (ref.stem, name)
        dates = {ref.shown[k] for k in ("letter_date", "date_of_birth", "appointment")}
        assert ref.shown["referral_date"] not in dates and len(dates) == 3
        assert ref.shown["other_id"] != ref.truth["participant_id"]
        assert {"other_id_1", "other_person_1", "other_person_2"} <= set(ref.identifiers)


def test_referrals_g_marks_stand_for_what_they_say() -> None:
    """Over 400 draws a ticked statement's truth is whether it affirms, and it is among
    those printed; a ringed answer is a question's; a sentence's truth is its kind's; an
    unanswered question only where marks are allowed."""
    drawn = [values.draw_consent(random.Random(i), marks=i % 2 == 0) for i in range(400)]
    affirming = {affirm for affirm, _ in values.CONSENT_STATEMENTS}
    ticked = [c for c in drawn if c.mode == "ticked"]
    assert ticked and all(c.truth is (c.sentence in affirming) for c in ticked)
    assert all(c.sentence in c.statements for c in ticked)
    questions = dict(values.CONSENT_QUESTIONS)
    assert all(questions[c.sentence] == c.options for c in drawn if c.mode == "ringed")
    for c in drawn:
        if c.mode in values.CONSENT_SENTENCES:
            truth, wordings = values.CONSENT_SENTENCES[c.mode]
            assert c.truth is truth and c.sentence in wordings
    assert any(c.blank for c in drawn) and not any(c.blank for c in drawn[1::2])


def test_referrals_g_ink_marks_only_the_answer_chosen() -> None:
    """On the page the chosen statement's box is ticked and the other's is empty; the
    ringed option has its ring round it and the other none; a blank question rings none."""
    affirm, deny = values.CONSENT_STATEMENTS[0]
    for truth in (True, False):
        page = Page()
        consent = Consent(truth, "ticked", affirm if truth else deny, (affirm, deny))
        show_consent(page, 100, 200, 1400, consent, "Wren", "cross")
        inked = [_ink(page, (106, y + 8, 126, y + 30)) for y in (200, 254)]
        assert (inked[0] > 20, inked[1] > 20) == (truth, not truth), inked
    question, options = values.CONSENT_QUESTIONS[0]
    answers: list[tuple[bool | None, bool]] = [(True, False), (False, False), (None, True)]
    for answer, blank in answers:
        page = Page()
        mode = "absent" if blank else "ringed"
        show_consent(page, 100, 200, 1400, Consent(answer, mode, question, (), options, blank), "")
        yes, no = page.boxes[1], page.boxes[2]
        rings = [_ink(page, (b[0] - 20, b[1], b[0] - 4, b[3])) for b in (yes, no)]
        assert (rings[0] > 5, rings[1] > 5) == (answer is True, answer is False), rings


def test_referrals_g_every_family_writes_its_values_its_own_way() -> None:
    """Each family writes dates in its own styles; the screen and the table put the
    patient's surname first in capitals; only the note prints labels after values, a
    sticker and consent in words alone; the questionnaire numbers its questions."""
    for family in FAMILIES:
        for n in range(6):
            rng = random.Random(f"{family}:{n}")
            drawn = drawn_for(family, rng)
            said = " ".join(FAMILIES[family](drawn, rng)[0].printed)
            assert drawn.meta["date_style"] in values.FAMILY_DATES[family]
            surname_first = drawn.shown["patient_name"].split(",")[0]
            upper = family in ("ehr_screen", "header_row_table")
            assert (surname_first.isupper() and "," in drawn.shown["patient_name"]) is upper
            after = f"({drawn.labels['after_clinician']})"
            assert (after in said) is (family == "clinic_note"), family
            if family == "clinic_note":
                assert drawn.consent.mode in ("agrees", "refuses", "absent")
                assert f"DOB {drawn.shown['date_of_birth']}" in said
            if family == "numbered_questionnaire":
                assert "1." in said.split() and "13." in said.split()


def test_referrals_g_same_seed_same_pixels_and_a_second_page_now_and_then() -> None:
    """A referral is drawn from its (seed, index) alone, another seed draws another; the
    screen print runs to a second page now and then."""

    def digest(ref: ReferralG) -> str:
        return hashlib.sha256(b"".join(page.tobytes() for page in ref.pages)).hexdigest()

    first, again, other = generate(3, 7), generate(3, 7), generate(3, 8)
    assert digest(first) == digest(again) != digest(other)
    assert first.truth == again.truth and first.identifiers == again.identifiers
    screens = [generate(index, 2) for index in range(3, 60, 5)]
    two = [ref for ref in screens if ref.meta["pages"] == "2"]
    assert two and all("Page 2 of 2" in ref.printed for ref in two)
    assert all(ref.pages[0].size == (1654, 2339) for ref in screens)
