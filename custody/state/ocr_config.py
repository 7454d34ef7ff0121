"""The OCR configuration in force, its history, and a pin to roll back to.

Every signed record already names the engine, its version, parameters and
model hashes. This module adds the operator's view across documents: which
configuration the OCR workers run now, when each one came into force, and a
way back. Entries live under ``ocr-config/`` in the raw object store (plain:
they carry no document data and must outlive any tenant key), appended with a
conditional create, so history is never rewritten.

- An OCR worker calls ``observe`` at start; a configuration differing from
  the newest active one appends an ``activated`` entry.
- ``pin`` (``custody ocr config rollback|pin``) appends a ``pinned`` entry and
  a new create-only version of the pin, ``ocr-config/pin/v<N>.json``
  (:mod:`custody.state.versions`); workers started after that build their engine with
  the pinned parameters instead of their settings. ``unpin`` appends an empty
  version. Nothing is rewritten, so an old copy put back cannot restore a pin;
  ``ocr-config/pin.json`` of older releases is read while no version exists.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from custody.canonical import canonical_json
from custody.state import versions
from custody.stores import ObjectStore

PREFIX = "ocr-config/"
PIN_PREFIX = f"{PREFIX}pin/"
PIN_KEY = f"{PREFIX}pin.json"  # before versions: read only while none exists
_HISTORY = f"{PREFIX}history/"
_MAX_RACE = 100

ParamValue = str | int | float | bool
Action = Literal["activated", "pinned", "unpinned"]


class OcrConfig(BaseModel):
    engine: str
    version: str
    params: dict[str, ParamValue] = Field(default_factory=dict)
    model_hashes: dict[str, str] = Field(default_factory=dict)

    @property
    def digest(self) -> str:
        """A short, stable name for this exact configuration."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json"))).hexdigest()[:16]


class ConfigEntry(BaseModel):
    seq: int
    at: datetime
    action: Action
    config: OcrConfig | None = None
    digest: str | None = None
    actor: str
    reason: str | None = None


class ConfigRegistry:
    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def history(self) -> list[ConfigEntry]:
        return [
            ConfigEntry.model_validate_json(self._store.get(k))
            for k in sorted(self._store.list(_HISTORY))
        ]

    def active(self) -> ConfigEntry | None:
        """The configuration workers most recently started with."""
        found = [e for e in self.history() if e.action == "activated"]
        return found[-1] if found else None

    def pinned(self) -> OcrConfig | None:
        raw = versions.latest(self._store, PIN_PREFIX, legacy=PIN_KEY)
        # An unpin is a version holding JSON null.
        return None if raw is None or raw == b"null" else OcrConfig.model_validate_json(raw)

    def observe(self, config: OcrConfig, actor: str) -> ConfigEntry | None:
        """Record that a worker runs ``config``; a no-op when it is already the active one."""
        current = self.active()
        if current is not None and current.digest == config.digest:
            return None
        return self._append("activated", actor, config=config)

    def previous(self) -> ConfigEntry | None:
        """The last activated configuration before the active one: the known-good to go back to."""
        active = self.active()
        if active is None:
            return None
        older = [e for e in self.history() if e.action == "activated" and e.digest != active.digest]
        return older[-1] if older else None

    def find(self, ref: str) -> ConfigEntry | None:
        """An activated entry by sequence number or digest prefix."""
        for entry in reversed(self.history()):
            if entry.action != "activated":
                continue
            if str(entry.seq) == ref or (entry.digest or "").startswith(ref) and len(ref) >= 6:
                return entry
        return None

    def pin(self, entry: ConfigEntry, actor: str, reason: str) -> ConfigEntry:
        if entry.config is None:
            raise ValueError("only an activated configuration can be pinned")
        versions.append(
            self._store, PIN_PREFIX, canonical_json(entry.config.model_dump(mode="json"))
        )
        return self._append("pinned", actor, config=entry.config, reason=reason)

    def unpin(self, actor: str, reason: str) -> ConfigEntry:
        versions.append(self._store, PIN_PREFIX, b"null")
        return self._append("unpinned", actor, reason=reason)

    def _append(
        self,
        action: Action,
        actor: str,
        *,
        config: OcrConfig | None = None,
        reason: str | None = None,
    ) -> ConfigEntry:
        seq = len(list(self._store.list(_HISTORY)))
        for _ in range(_MAX_RACE):
            seq += 1
            entry = ConfigEntry(
                seq=seq,
                at=datetime.now(UTC),
                action=action,
                config=config,
                digest=config.digest if config else None,
                actor=actor,
                reason=reason,
            )
            if self._store.create(
                f"{_HISTORY}{seq:08d}.json", canonical_json(entry.model_dump(mode="json"))
            ):
                return entry
        raise RuntimeError("OCR configuration history kept losing races")
