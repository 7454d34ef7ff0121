"""Unsigned legacy state objects: refused in production, read with a warning in development.

A store insider without keys can create ``pools/limits.json`` (or a tenant's
plain record) where no signed version exists yet; production must not use it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from custody.errors import Code, StateInvalid
from custody.settings import Settings
from custody.state import versions
from custody.state.pools import LIMITS_KEY, LIMITS_PREFIX
from custody.state.signers import StateKeys, state_keys
from custody.stores.local import LocalStore

PLANTED = b'{"limits": {"ocr": 64}}'


@pytest.fixture
def keys(tmp_path: Path) -> StateKeys:
    return state_keys(Settings(home=tmp_path / "home"))


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    """A store where an insider has planted an unsigned legacy pool-limits object."""
    objects = LocalStore(tmp_path / "objects")
    objects.put(LIMITS_KEY, PLANTED)
    return objects


def test_versions_legacy_object_is_refused_in_production(
    store: LocalStore, keys: StateKeys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``CUSTODY_ENV=production`` a legacy object is STATE_INVALID, its content unused."""
    monkeypatch.setenv("CUSTODY_ENV", "production")
    with pytest.raises(StateInvalid) as err:
        versions.latest(store, LIMITS_PREFIX, legacy=LIMITS_KEY, keys=keys)
    assert err.value.code is Code.STATE_INVALID
    assert "64" not in str(err.value)


def test_versions_legacy_object_is_read_with_a_warning_in_development(
    store: LocalStore, keys: StateKeys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In development a legacy object still reads, with a warning that names no content."""
    monkeypatch.setenv("CUSTODY_ENV", "development")
    with capture_logs() as logs:
        assert versions.latest(store, LIMITS_PREFIX, legacy=LIMITS_KEY, keys=keys) == PLANTED
    (warning,) = [entry for entry in logs if entry["event"] == "state_legacy_read"]
    assert warning["log_level"] == "warning" and warning["key"] == LIMITS_KEY
    assert not any("64" in str(value) for value in warning.values())


def test_versions_first_signed_version_supersedes_legacy_in_production(
    store: LocalStore, keys: StateKeys
) -> None:
    """Once a version exists the legacy object is never consulted, so production reads it."""
    versions.append(store, LIMITS_PREFIX, b'{"limits": {"ocr": 2}}', keys=keys)
    found = versions.latest(store, LIMITS_PREFIX, legacy=LIMITS_KEY, keys=keys, production=True)
    assert found == b'{"limits": {"ocr": 2}}'


def test_versions_no_legacy_object_reads_as_absent_in_production(
    tmp_path: Path, keys: StateKeys
) -> None:
    """No version and no legacy object is simply nothing, not an error, in production."""
    empty = LocalStore(tmp_path / "empty")
    assert (
        versions.latest(empty, LIMITS_PREFIX, legacy=LIMITS_KEY, keys=keys, production=True) is None
    )
