"""How a document's type is decided: declared, the policy's only type, or classified."""

from __future__ import annotations

from activities.fields import extract
from custody.doctypes import shipped_types
from custody.fields import DocType
from custody.models import PageText, Word


def _page(*texts: str) -> PageText:
    words = [
        Word(
            text=t,
            confidence=0.99,
            box=[[100, 60 * n], [300, 60 * n], [300, 60 * n + 30], [100, 60 * n + 30]],
        )
        for n, t in enumerate(texts)
    ]
    return PageText(
        page=0, width=1000, height=1000, text="", words=words, mean_confidence=0.99, seconds=0.0
    )


RECEIPT = _page("TOTAL", "12.50", "CASH", "20.00", "CHANGE", "7.50", "GST", "SDN", "BHD")


def test_classify_declared_type_wins() -> None:
    """A type the submitter names is taken as declared, whatever the words say."""
    kind = extract([RECEIPT], declared=DocType.REFERRAL).classification
    assert (kind.type, kind.how) == (DocType.REFERRAL, "declared")


def test_classify_policy_with_one_expected_type() -> None:
    """A tenant expecting a single type gets it, recorded as the policy's."""
    kind = extract([RECEIPT], expected=[DocType.FORM]).classification
    assert (kind.type, kind.how) == (DocType.FORM, "policy")


def test_classify_picks_among_expected_types_by_cues() -> None:
    """Undeclared, the cue words choose, and only among the types expected."""
    assert extract([RECEIPT]).classification.type == DocType.RECEIPT
    kind = extract([RECEIPT], expected=[DocType.REFERRAL, DocType.FORM]).classification
    assert kind.type in (DocType.REFERRAL, DocType.FORM)
    assert kind.how == "classified"


def test_classify_without_cues_is_an_unsure_form() -> None:
    """A page with no cue words is a generic form, at no more than even confidence."""
    kind = extract([_page("lorem", "ipsum")]).classification
    assert (kind.type, kind.confidence) == (DocType.FORM, 0.5)


def test_classify_a_table_of_figures_without_receipt_words_is_a_form() -> None:
    """Twelve amounts beside one receipt word are a form's table, not a receipt."""
    figures = [f"{n}.{n % 10}0" for n in range(1, 13)]
    assert extract([_page("SUBJECT:", "DATE:", "Total", *figures)]).classification.type == "form"
    assert extract([RECEIPT]).classification.type == "receipt"


def test_classify_a_configured_type_by_its_cue_words() -> None:
    """Given the shipped types, a page saying discharge, admitted, allergies is a discharge."""
    page = _page("Discharge", "summary", "Admitted:", "Allergies:", "Patient:")
    kind = extract([page], configured=shipped_types()).classification
    assert (kind.type, kind.how) == ("discharge", "classified")
    assert extract([page]).classification.type != "discharge"  # unknown unless configured


def test_classify_a_referral_sent_as_an_email_is_a_referral_not_a_form() -> None:
    """A printed e-mail's header words (From, To, Subject, Date, cc, Re) outscore its
    referral words as a form's; half a referral's cues make it a referral all the same,
    unsure (below even confidence), while two referral words among them leave a form."""
    header = ("From:", "To:", "Subject:", "Date:", "cc:", "Re:", "Sent:", "Name:")
    kind = extract([_page(*header, "referral", "patient", "clinic", "consent")]).classification
    assert kind.scores["form"] > kind.scores["referral"] >= 0.5
    assert (kind.type, kind.how) == (DocType.REFERRAL, "classified") and kind.confidence < 0.5
    assert extract([_page(*header, "patient", "clinic")]).classification.type == DocType.FORM
