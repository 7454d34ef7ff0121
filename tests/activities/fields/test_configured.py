"""A configured type read by the one generic reader: the shipped discharge, a tenant's own."""

from __future__ import annotations

from activities.fields import extract
from custody.doctypes import TypeSpec, shipped_types
from custody.models import Mark, PageText
from tests.activities.fields.pages import Row, placed

DISCHARGE = [
    [("DISCHARGE", 100), ("SUMMARY", 320)],
    [("Patient:", 100), ("Jane", 600), ("Doe", 720)],
    [("Admitted:", 100), ("3", 600), ("March", 640), ("2026", 780)],
    [("Date", 100), ("of", 200), ("discharge:", 260), ("14/03/2026", 600)],
    [
        ("Allergies:", 100),
        *[("penicillin", 600), ("-", 820), ("none", 860), ("known;", 960)],
        *[("latex", 1100), ("-", 1220), ("rash", 1260)],
    ],
    [("Discharged", 100), ("by:", 330), ("Dr.", 600), ("Grace", 680), ("Okafor", 800)],
]


def _page(rows: list[Row], *, marks: list[Mark] | None = None) -> PageText:
    """Row ``n`` at y = 100 + 80n, each word at its x (:func:`placed`, at confidence 0.98)."""
    return placed(rows, conf=0.98, marks=marks)


def _values(page: PageText, **kwargs: object) -> dict[str, object]:
    read = extract([page], configured=shipped_types(), **kwargs)  # type: ignore[arg-type]
    return {n: f.value for n, f in read.fields.items()}


def test_configured_discharge_is_classified_and_read_without_code() -> None:
    """Undeclared, the summary is a discharge by its cues; every field in its normal form."""
    read = extract([_page(DISCHARGE)], configured=shipped_types())
    assert (read.classification.type, read.classification.how) == ("discharge", "classified")
    assert {n: f.value for n, f in read.fields.items()} == {
        "patient": "Jane Doe",
        "admitted": "2026-03-03",
        "discharged": "2026-03-14",
        "allergies": "penicillin - none known; latex - rash",
        "clinician": "Dr. Grace Okafor",
    }
    assert all(f.status == "found" and 0.6 <= f.confidence < 1.0 for f in read.fields.values())
    assert read.fields["discharged"].box == [600, 340, 800, 370]


def test_configured_label_that_fits_more_words_owns_the_phrase() -> None:
    """ "Discharged by:" is the clinician's label, never the discharge date's."""
    rows = [DISCHARGE[0], [("Discharged", 100), ("by:", 330), ("12/03/2026", 600)]]
    values = _values(_page(rows), declared="discharge")
    assert values["clinician"] is None and values["discharged"] is None


def test_configured_value_under_its_label_is_read_less_surely() -> None:
    """A boxed form's label over its value: found below, less sure than beside."""
    rows = [[("Patient", 100)], [("Jane", 100), ("Doe", 220)]]
    read = extract([_page(rows)], declared="discharge", configured=shipped_types())
    patient = read.fields["patient"]
    assert (patient.status, patient.value, patient.method) == ("found", "Jane Doe", "label:below")
    assert patient.confidence == round(0.75 * 0.98, 4)


def test_configured_field_seen_without_a_value_of_its_type_is_review() -> None:
    """A date field beside words that are no date is review; a field never labelled is missing."""
    rows = [DISCHARGE[0], [("Admitted:", 100), ("pending", 600)]]
    read = extract([_page(rows)], declared="discharge", configured=shipped_types())
    assert (read.fields["admitted"].status, read.fields["admitted"].value) == ("review", None)
    assert read.fields["allergies"].status == "missing"


def test_configured_conflicting_readings_are_review() -> None:
    """Two admission dates that disagree: no value, a person looks."""
    rows = [
        [("Admitted:", 100), ("03/03/2026", 600)],
        [("Date", 100), ("admitted:", 200), ("04/03/2026", 600)],
    ]
    read = extract([_page(rows)], declared="discharge", configured=shipped_types())
    assert (read.fields["admitted"].status, read.fields["admitted"].value) == ("review", None)


def test_configured_tenant_type_reads_identifiers_by_pattern_and_ticks() -> None:
    """A tenant's own type: the identifier the pattern fits, a ticked box as true."""
    incident = TypeSpec.model_validate(
        {
            "fields": {
                "reference": {
                    "labels": ["Incident No"],
                    "type": "identifier",
                    "pattern": r"INC-\d{4}",
                },
                "reported": {"labels": ["Reported to police"], "type": "checkbox"},
            }
        }
    )
    rows = [
        [("Incident", 100), ("No:", 300), ("ref", 600), ("INC-0042", 700)],
        [("Reported", 140), ("to", 340), ("police", 400)],
    ]
    ticked = [Mark(box=[100, 182, 126, 208], ink=0.4)]
    read = extract(
        [_page(rows, marks=ticked)], declared="incident", configured={"incident": incident}
    )
    assert read.fields["reference"].value == "INC-0042"
    assert (read.fields["reported"].value, read.fields["reported"].method) == (True, "checkbox")
