"""Security-relevant mutable state cannot be rolled back by putting old objects back.

Each test plays a store insider without keys: it copies every object under the
state's prefix, lets the operator make a change, then writes the old copies
back over whatever is there (a restore from backup). The change must survive.
State written by older releases as one object is still read (the migration path).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from custody.state import versions
from custody.state.ocr_config import PIN_KEY, ConfigRegistry, OcrConfig
from custody.state.pools import LIMITS_KEY, read_limits, set_limit
from custody.stores import ObjectStore
from custody.stores.local import LocalStore
from starter.client.pause import STATE_KEY, is_paused, set_paused
from starter.edge import tenants
from starter.edge.tenants import AuthError

CONFIG = OcrConfig(engine="tesseract", version="5.3.4", params={"psm": 3})


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


def _restored_after(store: ObjectStore, prefix: str, change: Callable[[], object]) -> None:
    """Run ``change``, then put back every object that was under ``prefix`` before it."""
    backup = {key: store.get(key) for key in store.list(prefix)}
    change()
    for key, data in backup.items():
        store.put(key, data)


def test_rollback_old_tenant_record_does_not_unrevoke_key(store: LocalStore) -> None:
    """Restoring tenants/<name>.json from before a revocation leaves the key revoked."""
    _, api_key = tenants.add(store, "clinic-a")
    _restored_after(store, "tenants/", lambda: tenants.revoke(store, "clinic-a"))
    with pytest.raises(AuthError) as err:
        tenants.authenticate(store, api_key)
    assert err.value.revoked is True
    listed = tenants.list_tenants(store)
    assert [t.name for t in listed] == ["clinic-a"] and listed[0].revoked_at is not None


def _legacy_tenant(store: LocalStore, name: str) -> tuple[tenants.Tenant, str]:
    """A tenant as a release before signed versions wrote it: the plain record only."""
    other = LocalStore(store.root.parent / "elsewhere")
    tenant, api_key = tenants.add(other, name)
    for key in (f"tenants/{name}.json", f"tenant-keys/{tenant.key_id}.json"):
        store.put(key, other.get(key))
    return tenant, api_key


def test_rollback_legacy_revoked_record_stays_revoked(store: LocalStore) -> None:
    """A record revoked before markers existed is refused, and revoking again seals it."""
    tenant, api_key = _legacy_tenant(store, "clinic-b")
    old = store.get("tenants/clinic-b.json")
    revoked = tenant.model_copy(update={"revoked_at": tenant.created_at})
    store.put("tenants/clinic-b.json", revoked.model_dump_json().encode())  # an old release
    with pytest.raises(AuthError):
        tenants.authenticate(store, api_key)
    tenants.revoke(store, "clinic-b")
    store.put("tenants/clinic-b.json", old)
    with pytest.raises(AuthError) as err:
        tenants.authenticate(store, api_key)
    assert err.value.revoked is True


def test_rollback_old_pause_state_does_not_resume_admission(store: LocalStore) -> None:
    """Restoring the admission state from before a pause leaves admission paused."""
    set_paused(store, False)
    _restored_after(store, "admission/", lambda: set_paused(store, True))
    assert is_paused(store) is True


def test_rollback_legacy_pause_state_read_until_superseded(store: LocalStore) -> None:
    """admission/state.json of an older release counts until the first version is written."""
    store.put(STATE_KEY, json.dumps({"paused": True}).encode())
    assert is_paused(store) is True
    set_paused(store, False)
    assert is_paused(store) is False


def test_rollback_old_pool_limits_do_not_return(store: LocalStore) -> None:
    """Restoring the pool limits from before a change leaves the new limit in force."""
    set_limit(store, "ocr", 2)
    _restored_after(store, "pools/", lambda: set_limit(store, "ocr", 5))
    assert read_limits(store) == {"ocr": 5}


def test_rollback_legacy_pool_limits_read_and_carried_forward(store: LocalStore) -> None:
    """pools/limits.json of an older release is read, and the first change keeps its limits."""
    store.put(LIMITS_KEY, json.dumps({"limits": {"io": 3}}).encode())
    assert read_limits(store) == {"io": 3}
    assert set_limit(store, "ocr", 2) == {"io": 3, "ocr": 2}
    store.put(LIMITS_KEY, json.dumps({"limits": {"io": 9}}).encode())
    assert read_limits(store) == {"io": 3, "ocr": 2}


def test_rollback_old_ocr_pin_does_not_return_after_unpin(store: LocalStore) -> None:
    """Restoring ocr-config/ from while a pin was in force does not pin again."""
    registry = ConfigRegistry(store)
    entry = registry.observe(CONFIG, "worker-1")
    assert entry is not None
    registry.pin(entry, "operator", "regression")
    _restored_after(store, "ocr-config/", lambda: registry.unpin("operator", "fixed"))
    assert registry.pinned() is None


def test_rollback_legacy_ocr_pin_read_until_superseded(store: LocalStore) -> None:
    """ocr-config/pin.json of an older release is the pin until the first versioned change."""
    registry = ConfigRegistry(store)
    store.put(PIN_KEY, CONFIG.model_dump_json().encode())
    assert registry.pinned() == CONFIG
    registry.unpin("operator", "fixed")
    assert registry.pinned() is None


def test_versions_newest_wins_and_never_overwrites(store: LocalStore) -> None:
    """Appends number 1, 2, 3; the newest is read; a version taken by a racer is not rewritten."""
    assert [versions.append(store, "x/", str(i).encode()) for i in range(3)] == [1, 2, 3]
    assert versions.latest(store, "x/", legacy="x.json") == b"2"
    store.put("x/v9.json", b"odd name")  # not zero-padded: not a version
    assert versions.latest(store, "x/") == b"2"
    racer = LocalStore(store.root)  # another process, whose listing is stale
    racer.list = lambda prefix: iter(())  # type: ignore[method-assign]
    assert versions.append(racer, "x/", b"late") == 4
    first = json.loads(store.get("x/v0000000001.json"))
    assert first["body"] == "0" and versions.latest(store, "x/") == b"late"
