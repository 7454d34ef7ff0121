"""The wordings each label is printed in, per document type.

A wording ending in a colon matches only where the colon is printed: single
common words ("To:", "Date:") are labels only then, not inside a value.

Besides the fields wanted, the distractors real forms print beside them
(date of birth, MRN, fax dates) and the common labels of a cover sheet are
listed too: each is an anchor that ends the value before it, and is never
taken for the field it stands beside.
"""

from __future__ import annotations

REFERRAL_LABELS: dict[str, tuple[str, ...]] = {
    "referral_date": (
        "Referral Date",
        "Date of Referral",
        "Date referred",
        "Referred on",
        "Referral Dt",
        "Ref Date",
    ),
    "participant_id": (
        "Participant ID",
        "Participant No",
        "Participant No.",
        "Participant Number",
        "Participant #",
        "Participant Identifier",
        "Participant ID No",
        "Participant Code",
        "Study ID",
        "Subject ID",
    ),
    "consent": (
        "Consent to share obtained",
        "Consent to share",
        "Consent given",
        "Consent obtained",
        "Participant consent",
        "Patient consent",
        "Consent:",
    ),
    "referring_clinic": (
        "Referring clinic",
        "Referring practice",
        "Referring practice name",
        "From clinic",
        "Clinic:",
        "Practice:",
    ),
    "clinician": (
        "Referring clinician",
        "Referring physician",
        "Referring doctor",
        "Referring GP",
        "Referred by",
        "Clinician:",
    ),
    "reason": (
        "Reason for referral",
        "Reason",
        "Presenting concern",
        "Presenting complaint",
        "Clinical question",
    ),
    # Distractors: printed beside the wanted fields, never wanted.
    "dob": ("Date of Birth", "DOB", "D.O.B.", "Birth date", "Born:"),
    "mrn": (
        "MRN",
        "Medical Record No",
        "Medical Record No.",
        "Medical Record Number",
        "Hospital No",
        "Hospital No.",
        "Hospital Number",
        "NHS No",
        "NHS Number",
    ),
    "fax_date": ("Fax date", "Date sent", "Printed on", "Date printed", "Sent:", "Received:"),
    "other": tuple(
        f"{word}:" for word in ("To", "From", "Pages", "Re", "Date", "Phone", "Tel", "Fax", "Name")
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
