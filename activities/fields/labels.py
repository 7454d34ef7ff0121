"""The wordings each label is printed in, per document type.

A wording ending in a colon matches only where the colon is printed or where
it stands alone in its cell, as tables and boxes print labels: single common
words ("To:", "Date:") are labels only then, not inside a value or a sentence.
Words are compared in the anchors' folded form, where abbreviations meet
their long forms ("No", "Nr", "#" and "Number"; "Pt" and "Patient"; "Dt" and
"Date"), so each wording stands for its abbreviations too.

Besides the fields wanted, the distractors real forms print beside them
(date of birth, MRN, fax dates) and the common labels of a cover sheet are
listed too: each is an anchor that ends the value before it, and is never
taken for the field it stands beside.
"""

from __future__ import annotations


def _listed(text: str) -> tuple[str, ...]:
    """Wordings written as a comma-separated list, in order."""
    return tuple(" ".join(part.split()) for part in text.split(",") if part.strip())


#: Where a referral comes from, after "Referring".
_PLACES = (
    "clinic",
    "practice",
    "surgery",
    "site",
    "unit",
    "centre",
    "service",
    "hospital",
    "organisation",
    "department",
    "team",
    "location",
    "facility",
    "institution",
    "trust",
)
#: Records whose numbers stand beside a study's identifier.
_RECORDS = (
    *("Medical Record", "Hospital", "NHS", "Record", "Unit", "Case", "CHI", "Patient"),
    *("Lab", "Specimen", "Sample", "Accession", "Order", "Visit", "Encounter", "Insurance"),
)
#: Events whose dates stand beside a referral's.
_EVENTS = (
    *("Appointment", "Clinic", "Visit", "Fax", "Admission", "Discharge", "Print", "Onset"),
    *("Surgery", "Scan", "Test", "Sample", "Collection", "Procedure", "Review", "Follow-up"),
)

#: What a study's identifier is called: a head word and a kind of number.
_STUDY_HEADS = _listed(
    """Participant, Study participant, Trial participant, Research participant, Subject,
    Study subject, Study, Trial, Research, Enrolment, Randomisation, Screening, Volunteer,
    Cohort, Patient study, Registration, Trial subject, Research subject, Cohort member,
    Study member, Trial member, Enrollee"""
)
_STUDY_TAILS = ("ID", "No", "Code", "Ref", "Identifier")

#: What a referral's date dates, and what was done to it on that date.
_DATED = ("Referral", "Letter", "Request", "Referral letter", "Referral form")
_DONE = (
    *("raised", "made", "sent", "written", "issued", "created", "completed", "dated", "date"),
    *("dispatched", "submitted", "signed", "generated"),
)
#: Who wrote a referral, by role, and how a form asks for them.
_ROLES = (
    *("clinician", "physician", "doctor", "GP", "consultant", "practitioner", "provider"),
    *("professional", "health professional", "HCP", "specialist", "surgeon", "nurse"),
)
_WHO = ("Referring", "Requesting", "Ordering", "Responsible", "Sending", "Submitting", "Treating")
#: Where a referral comes from, as forms put it beside a place's word.
_ORIGIN = ("Referring", "Requesting", "Sending", "Source", "Originating", "Sender's")
#: What a referral is about: its head nouns, and the phrases around them.
_ABOUT = (
    *("problem", "complaint", "concern", "indication", "question", "issue", "symptoms"),
    *("findings", "history", "diagnosis", "condition"),
)
_DETAILS = ("Details", "Nature", "Summary", "Description", "Outline", "Purpose")

REFERRAL_LABELS: dict[str, tuple[str, ...]] = {
    "referral_date": (
        "Referral Date",
        "Date of Referral",
        "Date of this referral",
        "Date referred",
        "Referred on",
        "Referral Dt",
        "Ref Date",
        "Referral sent",
        "Date of request",
        "Request date",
        "Letter date",
        "Date of letter",
        "Date of this letter",
        "Letter dated",
        "Date referral made",
        "Referral made",
        "Referral made on",
        "Referred:",
        "Date of ref",
        # What a referral's date is called, by its parts: the thing dated and what was
        # done to it ("Referral raised", "Letter written", "Date request sent").
        *(f"{thing} {done}" for thing in _DATED for done in _DONE),
        *(f"Date {thing} {done}" for thing in _DATED for done in _DONE),
        *(f"Date of {thing}" for thing in _DATED),
    ),
    #: A date labelled only "Date:" or "Dated": the referral's, when nothing says otherwise.
    "plain_date": ("Date:", "Dated", "Dated:"),
    "participant_id": (
        *(f"{head} {tail}" for head in _STUDY_HEADS for tail in _STUDY_TAILS),
        "Study participant",
        "Participant #",
        "Participant Number",
        "Participant:",
        "PID",
        "Subject:",
        "Study number",
        "Trial number",
    ),
    "consent": (
        "Consent to share obtained",
        "Consent to share information",
        "Consent to share data",
        "Consent to share records",
        "Consent to share",
        "Consent given",
        "Consent obtained",
        "Consent status",
        "Participant consent",
        "Patient consent",
        "Data sharing consent",
        "Permission to share",
        "Agrees to share",
        "Agreed to share",
        "Consent for information sharing",
        "Consent to information sharing",
        "Information sharing consent",
        "Consent to data sharing",
        "Sharing consent",
        "Consent recorded",
        "Consented",
        "Consent:",
    ),
    "referring_clinic": (
        *(f"{origin} {place}" for origin in _ORIGIN for place in _PLACES),
        *(f"{place} of origin" for place in _PLACES),
        *(f"{place} referring" for place in _PLACES),
        *(f"Referred from {place}" for place in _PLACES),
        # "From (site)": a bracketed word folds into the label it qualifies.
        *(f"From {place}" for place in _PLACES),
        "Practice / Clinic",
        "Clinic / Practice",
        "Place of referral",
        "Referral source",
        "Referring practice name",
        "From clinic",
        "From practice",
        "Referred from",
        "Sending clinic",
        "Source clinic",
        "Clinic name",
        "Practice name",
        "GP practice",
        "GP surgery",
        "Clinic:",
        "Practice:",
        "Surgery:",
    ),
    "clinician": (
        *(f"{who} {role}" for who in _WHO for role in _ROLES),
        *(f"{role} referring" for role in _ROLES),
        *(f"{role} in charge" for role in _ROLES),
        *(f"Name of {who.lower()} {role}" for who in _WHO[:2] for role in _ROLES),
        "Author",
        "Author:",
        "Written by",
        "Authorised by",
        "Completed by",
        "Referral made by",
        "Referral by",
        "Referring clinician",
        "Referring physician",
        "Referring doctor",
        "Referring GP",
        "Referring consultant",
        "Referring practitioner",
        "Referring professional",
        "Referring health professional",
        "Referring HCP",
        "Referring provider",
        "Referring clinician name",
        "Name of referring clinician",
        "Requesting clinician",
        "Requesting doctor",
        "Requesting physician",
        "Requesting practitioner",
        "Requesting consultant",
        "Ordering clinician",
        "Ordering physician",
        "Ordering provider",
        "Clinician name",
        "Responsible clinician",
        "Signed by",
        "Requested by",
        "Referred by",
        "Referred by name",
        "Referrer name",
        "Name of referrer",
        "Referrer",
        "Clinician:",
        "GP:",
        "Doctor:",
        "Signed:",
    ),
    "reason": (
        "Reason for referral",
        "Referral reason",
        "Reason for request",
        "Reasons for referral",
        "Purpose of referral",
        "Indication for referral",
        "Clinical indication",
        "Referral question",
        "Provisional diagnosis",
        "Working diagnosis",
        "Presenting symptoms",
        "History of presenting complaint",
        "Nature of problem",
        "Summary of problem",
        "HPC",
        "RFR",
        "Reason",
        "Presenting concern",
        "Presenting complaint",
        "Presenting problem",
        "Main concern",
        "Clinical question",
        "Clinical details",
        "Clinical summary",
        "Clinical information",
        "Indication",
        "Problem:",
        *(f"Presenting {about}" for about in _ABOUT),
        *(f"Clinical {about}" for about in _ABOUT),
        *(f"Main {about}" for about in _ABOUT),
        *(f"{detail} of {about}" for detail in _DETAILS for about in _ABOUT),
        *(f"{detail} of referral" for detail in _DETAILS),
        "Why referred",
        "Why referral",
        "Why referred?",
        "Reason for referral / clinical details",
    ),
    # Distractors: printed beside the wanted fields, never wanted.
    "dob": ("Date of Birth", "DOB", "D.O.B.", "Birth date", "Born:", "Born"),
    "mrn": (
        *(f"{kind} {tail}" for kind in _RECORDS for tail in ("No", "Number", "ID")),
        "MRN",
        "Our ref",
        "Your ref",
        "Ref No",
        "Referral No",
        "Request No",
    ),
    "other_date": (
        *(f"{event} date" for event in _EVENTS),
        *(f"Date of {event}" for event in _EVENTS),
        "Date seen",
        "Seen on",
        "Last seen",
        "Date sent",
        "Date received",
        "Date dictated",
        "Dictated:",
        "Date typed",
        "Forwarded:",
        "Forwarded on",
        "Typed:",
        "Next appointment",
        "Printed on",
        "Date printed",
        "Printed:",
        "Sent:",
        "Received:",
        "Admitted:",
        "Discharged:",
    ),
    #: Who sent a fax or a memo: a clinic, a clinician, or both ("Dr Jones, Castlegate Surgery").
    "sender": ("From:", "Sender:", "Sent by"),
    #: The patient's own doctor, printed beside the referrer's name: never the referrer's.
    "own_gp": ("Usual GP", "Registered GP", "Patient's GP", "Own GP", "Regular GP"),
    #: Other people a form names beside the referrer: who checked, typed or witnessed it.
    "other_person": (
        *(f"{done} by" for done in ("Checked", "Form checked", "Typed", "Transcribed")),
        *(f"{done} by" for done in ("Dictated", "Witnessed", "Verified", "Interpreted")),
        "Next of kin",
        "Copy to",
    ),
    "name": ("Patient name", "Pt name", "Participant name", "Full name", "Name:", "Patient:"),
    "other": tuple(
        f"{word}:"
        for word in ("To", "Pages", "Re", "Phone", "Tel", "Fax", "Address", "Cc", "Email")
    ),
}

RECEIPT_LABELS: dict[str, tuple[str, ...]] = {
    "total": (
        "Total",
        "Grand Total",
        "Total Amount",
        "Total Amt",
        "Nett Total",
        "Net Total",
        "Total Incl GST",
        "Total Inclusive GST",
        "Total (RM)",
        "Total RM",
        "Rounded Total",
        "Total Sales",
        "Amount Due",
        "Total Payable",
    ),
    "not_total": (
        "Subtotal",
        "Sub Total",
        "Sub-Total",
        "Total Qty",
        "Total Quantity",
        "Total GST",
        "Total Excl GST",
        "Total Exclusive GST",
        "Total Tax",
        "Total Discount",
        "Total Items",
        "Total Item",
        "Cash",
        "Change",
        "Rounding",
        "Tendered",
    ),
    "date": ("Date", "Invoice Date", "Bill Date", "Trans Date", "Doc Date"),
}
