"""Pages drawn for the rules tests: a referral without consent, a letter in German.

Drawn with Pillow's bundled face (the same glyphs on every machine), large and
clean, so the test is about rules and languages, not OCR.
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

#: The values the referral carries: tests assert they never reach logs or history.
REFERRAL_DATE = "14/03/2026"
PARTICIPANT_ID = "P-00421"

REFERRAL = [
    "HARBOUR VIEW PRACTICE",
    "Outpatient referral form",
    f"Referral Date:        {REFERRAL_DATE}",
    "Date of Birth:        02/07/1961",
    f"Participant ID:       {PARTICIPANT_ID}",
    "MRN:                  884213",
    "Referring clinician:  Dr. Grace Okafor",
    "Reason for referral:  Persistent knee pain",
]
#: A discharge summary: the shipped configured type (custody.doctypes), drawn.
DISCHARGE = [
    "ST MARY'S HOSPITAL",
    "Discharge summary",
    "Patient:              Amara Lindqvist",
    "Admitted:             3 March 2026",
    "Date of discharge:    14/03/2026",
    "Allergies:            penicillin - none known; latex - rash",
    "Discharged by:        Dr. Tomas Berg",
]
GERMAN = [
    "Sehr geehrte Kolleginnen und Kollegen,",
    "wir überweisen den Patienten wegen anhaltender",
    "Knieschmerzen an Ihre Klinik. Die Beschwerden bestehen",
    "seit drei Monaten und haben sich trotz Physiotherapie",
    "nicht gebessert. Wir bitten um eine Untersuchung und",
    "Mitteilung des Befundes. Mit freundlichen Grüßen",
]


def page(lines: list[str]) -> Image.Image:
    image = Image.new("L", (1275, 1650), 250)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=30)
    for n, line in enumerate(lines):
        draw.text((100, 120 + 70 * n), line, font=font, fill=20)
    return image


def png(lines: list[str]) -> bytes:
    out = io.BytesIO()
    page(lines).save(out, format="PNG")
    return out.getvalue()
