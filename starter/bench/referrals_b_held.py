"""The held-out split's layout families (``referrals_b``), written after the first was studied.

``checklist``: a numbered checklist, the participant code in a comb of one box
per character at the top right, consent as a question with two boxed answers.
``email``: an e-mail printout; the date is the one it was sent, the values sit
in the sentences of its body and its signature.
"""

from __future__ import annotations

from PIL import Image

from starter.bench.referrals_b_pages import Sheet, consent_options, consent_sentence
from starter.bench.referrals_b_values import Drawn


def checklist(d: Drawn) -> list[Image.Image]:
    s = Sheet("cond")
    s.text(120, 110, "Referral checklist - research clinic", 40, "sans_bold")
    s.text(1010, 200, d.labels["participant_id"], 24)
    for n, char in enumerate(d.shown["participant_id"]):
        x = 1010 + n * 40
        s.rect((x, 240, x + 36, 290))
        s.text(x + 9, 248, char, 30)
    rows = ("patient", "dob", "nhs", "referral_date", "clinician", "referring_clinic", "reason")
    y = 360
    for n, name in enumerate(rows, 1):
        at = s.text(120, y, f"{n}. {d.labels[name]}:", 28)
        s.text(max(at + 30, 700), y, d.shown[name], 28)
        s.draw.line((700, y + 40, 1530, y + 40), fill=150, width=1)
        y += 76
    consent_options(s, 120, y + 40, d)
    s.text(120, y + 140, f"{d.labels['other_date']}: {d.shown['other_date']}", 26)
    d.meta["consent_as"] = "options"
    return [s.image]


def email(d: Drawn) -> list[Image.Image]:
    s, rng = Sheet("sans"), d.rng
    initials = "".join(w[0] for w in d.shown["clinician"].replace(".", "").split()[1:]).lower()
    header = (
        ("From", f"{d.shown['clinician']} <{initials}.gp@nhs.example>"),
        ("Sent", d.shown["referral_date"]),
        ("To", "research.referrals@trials.example"),
        ("Subject", f"Referral - {d.labels['participant_id']} {d.shown['participant_id']}"),
    )
    for n, (label, value) in enumerate(header):
        s.text(120, 120 + n * 50, f"{label}:", 26, "sans_bold")
        s.text(300, 120 + n * 50, value, 26)
    s.draw.line((120, 340, 1530, 340), fill=120, width=2)
    body = [
        rng.choice(("Hi team,", "Dear research team,")),
        f"I'd like to refer {d.shown['patient']} (DOB {d.shown['dob']}) to your study.",
        f"They have been struggling with {d.shown['reason'].lower()} for some months.",
        consent_sentence(d),
        f"They were last seen on {d.shown['other_date']}.",
        "Kind regards,",
        d.shown["clinician"],
        d.shown["referring_clinic"],
    ]
    y = 400
    for line in body:
        s.text(120, y, line, 28)
        y += 70 if line.endswith((",", ".")) else 50
    d.meta["consent_as"] = "sentence"
    return [s.image]
