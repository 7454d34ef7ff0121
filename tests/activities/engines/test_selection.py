"""The OCR worker's engine: the settings' one, or an operator's pinned known-good configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.engines import tesseract
from activities.engines.selection import (
    CHECK_TESSERACT_PSM,
    build_checker,
    configured_engine,
    describe,
)
from activities.engines.tesseract import TesseractEngine
from custody.errors import ConfigurationError
from custody.settings import Settings
from custody.state.ocr_config import ConfigRegistry
from custody.stores.local import LocalStore


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, ocr_engine="tesseract", torch_threads=1)


def test_worker_records_its_configuration_once(tmp_path: Path) -> None:
    """A worker start records the engine it built; a second identical start adds nothing."""
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    engine = configured_engine(_settings(tmp_path), registry, "worker-1")
    configured_engine(_settings(tmp_path), registry, "worker-2")
    active = registry.active()
    assert active is not None and active.config == describe(engine)
    assert active.config.engine == "tesseract" and active.actor == "worker-1"
    assert [e.action for e in registry.history()] == ["activated"]


def test_worker_runs_the_pinned_configuration(tmp_path: Path) -> None:
    """After a rollback, a worker builds the pinned parameters, not its settings'."""
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    known_good = describe(configured_engine(_settings(tmp_path), registry, "w"))
    changed = known_good.model_copy(update={"params": {**known_good.params, "upscale": 3}})
    registry.observe(changed, "w")  # as if a new release had changed the tuning
    previous = registry.previous()
    assert previous is not None and previous.config == known_good
    registry.pin(previous, "operator", "receipts regressed")
    engine = configured_engine(_settings(tmp_path).model_copy(), registry, "w")
    assert engine.params()["upscale"] == known_good.params["upscale"] != 3
    active = registry.active()
    assert active is not None and active.digest == known_good.digest


def test_pin_needing_other_model_files_is_refused(tmp_path: Path) -> None:
    """Pinned parameters over different model files are not the known-good one: fail at start."""
    registry = ConfigRegistry(LocalStore(tmp_path / "objects"))
    good = describe(configured_engine(_settings(tmp_path), registry, "w"))
    other = good.model_copy(update={"model_hashes": {"eng.traineddata": "0" * 64}})
    entry = registry.observe(other, "w")
    assert entry is not None
    registry.pin(entry, "operator", "test")
    with pytest.raises(ConfigurationError, match="model files"):
        configured_engine(_settings(tmp_path), registry, "w")


def test_redaction_checker_is_tesseract_sparse_beside_pp_ocr() -> None:
    """The check's second reader is of another family than the workers' engine."""
    checker = build_checker(Settings(ocr_engine="rapidocr"))
    assert isinstance(checker, TesseractEngine) and checker.tuning.psm == CHECK_TESSERACT_PSM


def test_redaction_checker_missing_tesseract_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fault injected on purpose (no Debian package to remove here): Tesseract's probe
    fails as it does without the binary, and no view may be made unchecked."""

    def missing() -> tuple[str, Path]:
        raise RuntimeError("tesseract not found")

    monkeypatch.setattr(tesseract, "tesseract_info", missing)
    with pytest.raises(ConfigurationError, match="system-deps"):
        build_checker(Settings(ocr_engine="rapidocr"))
