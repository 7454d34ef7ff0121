"""Consent's negation rules: NegEx with consent's own targets and triggers."""

from __future__ import annotations

import pytest

from activities.fields.negation import polarity, speaks_of_consent

#: The probe sentences of the shared facts sheet (round 3, section 1) and their answers.
PROBES = [
    ("Consent to share these notes has NOT been given.", False),
    ("The participant has given written consent to share these notes.", True),
    ("Patient declined consent to share records.", False),
    ("No consent to share has been obtained.", False),
    ("She is happy for us to share this letter with your team.", True),
    ("Consent was withdrawn on 3 May.", False),
]


@pytest.mark.parametrize(("sentence", "answer"), PROBES)
def test_polarity_reads_the_facts_sheet_probes(sentence: str, answer: bool) -> None:
    """Each probe sentence gives or refuses consent as a reader would take it."""
    assert polarity(sentence) is answer


@pytest.mark.parametrize(
    ("statement", "answer"),
    [
        ("The patient consents to information being shared with the study team", True),
        ("The patient does not consent to information being shared", False),
        ("I do not consent to my records being shared", False),
        ("Consent to share declined", False),
        ("The patient refused permission to share.", False),
        ("He doesn\u2019t wish his details to be shared.", False),
        ("Verbal consent to share was obtained today.", True),
    ],
)
def test_polarity_reads_box_statements_and_refusals(statement: str, answer: bool) -> None:
    """A box's statement, a refusal word before or after the target, a curly apostrophe."""
    assert polarity(statement) is answer


def test_polarity_is_unsure_of_double_negation_and_of_mixed_answers() -> None:
    """Where NegEx is known to read wrong, nobody guesses: two negations, or yes and no at once."""
    assert polarity("She did not decline consent to share.") is None
    assert polarity("He consents to sharing, but his wife does not consent.") is None
    assert polarity("Referral for knee pain.") is None
    assert polarity("The patient does notconsent to sharing.") is None  # a word run in by OCR
    assert polarity("Iconsent to my records being shared") is True


def test_a_terminator_ends_a_triggers_reach() -> None:
    """A "no" in the sentence before, or across "but", does not negate consent."""
    assert polarity("No known allergies. Consent to share was obtained.") is True
    assert polarity("There were no concerns but consent was given.") is True


def test_speaks_of_consent_finds_wordings_without_the_word() -> None:
    """Consent has no single word: agreeing and permission speak of it too."""
    assert speaks_of_consent("The participant agreed to the sharing of these notes.")
    assert not speaks_of_consent("Please offer an outpatient appointment.")


@pytest.mark.parametrize(
    "sentence",
    [
        "Consent for research sharing is pending.",
        "Consent will be sought at the first visit.",
        "Consent to be confirmed at clinic.",
        "We have yet to obtain consent.",
        "Consent status unknown.",
        "She was asked whether she would consent to sharing and said no.",
        "Please obtain consent before sharing.",
        "If the patient does consent, please forward.",
        "The patient lacks capacity to consent.",
        "Consent form enclosed.",
        "He has been asked about consent.",
    ],
)
def test_consent_named_but_not_given_is_unsure_never_true(sentence: str) -> None:
    """Not negated is not given: a hypothetical, a question still open, or consent only
    named (ConText's hypothetical and uncertain cues; an affirmation needed for true).
    Each of these read as true before."""
    assert polarity(sentence) is None


def test_a_refusal_out_of_the_windows_reach_refuses_and_across_but_leaves_a_yes_unsure() -> None:
    """The sixth generator's letter, read as given at 0.95 before: the refusal is seven
    words after "Consent", the clause's own verb, so it refuses; after "consented" it is a
    conflict. A withdrawal after "but" undoes what came before it."""
    assert polarity("Consent to share his details for research was refused.") is False
    assert polarity("Permission to pass these notes on was refused at the last visit.") is False
    assert polarity("She has consented to share her notes, having previously declined.") is None
    assert polarity("Her mother consented on her behalf but she later withdrew.") is None
    assert polarity("He opted out of the research register consent.") is False


def test_affirmations_in_their_own_words_are_true() -> None:
    """A verb of consent with its subject, or a target affirmed in its clause."""
    assert polarity("Mrs Jones has consented to her records being shared.") is True
    assert polarity("He gave his permission for the notes to be shared on 03.04.2026.") is True
    assert polarity("He agreed that his notes may be shared.") is True


def test_a_ticked_statement_is_affirmed_by_its_tick() -> None:
    """A box's statement need not say "given": the tick does; unsure cues still hold."""
    assert polarity("Consent to share with the research team", ticked=True) is True
    assert polarity("Consent to share with the research team") is None
    assert polarity("Consent pending", ticked=True) is None
    assert polarity("Consent to share declined", ticked=True) is False


def test_opting_out_and_being_contacted_speak_of_consent() -> None:
    """Refusals without the word consent: opting out refuses, "did not opt out" is unsure;
    declining to be contacted refuses, being happy to be contacted gives. Missing before."""
    assert polarity("The patient has opted out of sharing her records for research.") is False
    assert polarity("He did not opt out of the register.") is None
    assert polarity("Patient declined to be contacted by the research team.") is False
    assert polarity("She is happy to be contacted by the research team.") is True
