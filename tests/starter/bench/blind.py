"""What the tests of each blind generator's wiring share: its split in ``bench fields``
and its set drawn by ``bench redaction`` (the bench's OCR and figures replaced, so only
the draw and the truth are checked)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from starter.bench import redaction
from starter.bench.fields import _report, drawn_referrals
from starter.bench.fields_score import Tally, Truth
from starter.cli.output import Exit

Drawn = list[tuple[Path, Truth]]


def assert_own_split(tmp_path: Path, split: str, beside: str, participant: str) -> None:
    """One drawn referral of ``split``, scored in a split of its own, with the issue's
    targets reported for it beside ``beside``'s."""
    drawn = drawn_referrals(tmp_path, 1, seed=3)
    assert [t.split for _, t in drawn].count(split) == 1
    tallies = {"all": Tally(), f"split:{split}": Tally(), f"split:{beside}": Tally()}
    truth = Truth("referral", {"participant_id": participant}, split)
    for key in tallies:
        tallies[key].add(truth, None, None, "published")
    report = _report(tallies, 1, 1.0)
    assert report["splits"][split]["fields"]["participant_id"]["missing"] == 1
    assert report["targets"][split]["met"] is False
    assert report["targets"][beside]["exact_share"] == 0.0


def drawn_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Drawn:
    """``bench redaction --sets NAME --referrals 6``'s draw: only that set, six documents."""
    seen: dict[str, Drawn] = {}

    def figures(sets: dict[str, Drawn], *_: object) -> dict[str, Any]:
        seen.update(sets)
        return {"sets": {}, "overall": redaction._summary([], 0.0), "target_met": False}

    monkeypatch.setattr(redaction, "figures", figures)
    monkeypatch.setattr("activities.engines.selection.build_engine", lambda _: None)
    monkeypatch.setattr("activities.engines.selection.build_checker", lambda _: None)
    monkeypatch.setattr("activities.engines.tesseract.TesseractEngine", lambda _: None)
    args = argparse.Namespace(
        corpus=tmp_path, referrals=6, seed=0, sets=name, limit=None, json=True
    )
    assert redaction.run(args, None) == Exit.FAILED  # type: ignore[arg-type]
    assert list(seen) == [name] and len(seen[name]) == 6
    return seen[name]


_FIELDS = {"referral_date", "participant_id", "consent", "referring_clinic", "clinician", "reason"}


def assert_valid_set(paths: list[Path], split: str, families: set[str], patient: set[str]) -> None:
    """Each file opens (a 200 dpi PNG page, or a two-page PDF) beside its truth in
    ``split`` (ISO date, consent a boolean where there is evidence, else null) and its
    identifiers apart; every family is drawn."""
    import json
    from datetime import date

    import pypdfium2
    from PIL import Image

    from starter.bench.fields_score import truth_for
    from starter.bench.referral_files import identifiers_for

    seen = set()
    for path in paths:
        record = json.loads(path.with_name(f"{path.stem}.fields.json").read_text())
        fields, drawn = record["fields"], record["drawn"]
        assert record["type"] == "referral" and drawn["split"] == split
        assert set(fields) == _FIELDS
        date.fromisoformat(fields["referral_date"])
        # No evidence either way: null, which the bench scores as "no value may go out".
        absent = drawn["consent_as"] == "absent"
        assert fields["consent"] is None if absent else isinstance(fields["consent"], bool)
        assert set(identifiers_for(path)) >= patient
        if path.suffix == ".pdf":
            pdf = pypdfium2.PdfDocument(path)
            assert len(pdf) == int(drawn["pages"]) == 2
            assert pdf[1].render(scale=0.2).to_pil().size[0] > 100
        else:
            with Image.open(path) as image:
                assert image.size[0] >= 1600 and round(image.info["dpi"][0]) == 200
        seen.add(drawn["layout"])
    assert seen == families
    truth = truth_for(paths[0])
    assert truth is not None and truth.split == split and "patient_name" not in truth.fields


def _folded(values: Iterable[str]) -> set[str]:
    return {v.casefold() for v in values}


def pool(values: ModuleType, name: str) -> Any:
    """A generator's pool ``name``: from its data (``values.POOLS``), or its module's
    constant of that name in capitals where it keeps its pools in code (the sixth)."""
    pools = getattr(values, "POOLS", None)
    return getattr(pools, name, {}) if pools is not None else getattr(values, name.upper(), {})


def _wordings(module: ModuleType) -> set[str]:
    """Every label wording a generator draws (its held-back pools too)."""
    names = ("labels", "labels_reserved", "labels_held")
    return _folded(w for name in names for p in pool(module, name).values() for w in p)


def assert_own_wordings(mine: ModuleType, others: Iterable[ModuleType]) -> None:
    """No label wording, clinic or reason of ``mine`` (a generator's values) is one of
    ``others``', letter case aside."""
    others = list(others)
    shared = _wordings(mine) & set().union(*map(_wordings, others))
    assert not shared, shared
    for name in ("clinics", "reasons"):
        theirs = set().union(*(_folded(pool(module, name)) for module in others))
        assert not _folded(pool(mine, name)) & theirs, name
