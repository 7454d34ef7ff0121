"""Named identities (issue #31): signed versions, key files, decisions that name a person."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custody import operators as ops
from custody.errors import Code, ConfigurationError, IdentityRefused, StateInvalid
from custody.operators import DecisionKind, Role
from custody.operators.credentials import check_acting
from custody.settings import Settings
from custody.state import versions
from custody.stores.local import LocalStore


def _home(tmp_path: Path) -> tuple[Settings, LocalStore]:
    settings = Settings(home=tmp_path, allow_plaintext=True)
    return settings, LocalStore(settings.objects_dir)


def _person(settings: Settings, store: LocalStore, name: str, *roles: Role) -> Path:
    if not ops.list_identities(store):
        _, root = ops.issue(settings.home / "operators", "root")
        ops.bootstrap(store, "root", root.public_key(), days=30)
    path, private = ops.issue(settings.home / "operators", name)
    ops.add(store, name, list(roles), private.public_key(), by="root", days=30)
    return path


def test_identities_act_only_with_their_own_key_and_role(tmp_path: Path) -> None:
    """A reviewer's key file makes reviewer decisions; a release approval needs releaser."""
    settings, store = _home(tmp_path)
    path = _person(settings, store, "ana", Role.REVIEWER)
    assert os.stat(path).st_mode & 0o777 == 0o600
    me = ops.acting(settings.model_copy(update={"operator_credential": path}), store,
                    DecisionKind.REVIEW)  # fmt: skip
    decision = me.decide(DecisionKind.REVIEW, {"sha256": "ab" * 32})
    assert decision.by == "ana" and ops.check_decision(store, decision).name == "ana"
    with pytest.raises(IdentityRefused) as refused:
        check_acting(store, me, DecisionKind.RELEASE_APPROVAL)
    assert refused.value.code is Code.ROLE_REQUIRED
    with pytest.raises(IdentityRefused) as none:
        ops.acting(settings, store, DecisionKind.REVIEW)  # no credential named: no default
    assert none.value.code is Code.OPERATOR_REQUIRED


def test_identities_revoked_or_expired_or_forged_are_refused(tmp_path: Path) -> None:
    """Revoked: refused from then on, its earlier decisions still verify; a changed
    subject or another key's signature is DECISION_INVALID; past expiry, EXPIRED."""
    settings, store = _home(tmp_path)
    path = _person(settings, store, "bo", Role.REVIEWER)
    me = check_acting(store, ops.load_credential(path), DecisionKind.REVIEW)
    before = me.decide(DecisionKind.REVIEW, {"sha256": "cd" * 32})
    forged = before.model_copy(update={"subject": {"sha256": "ef" * 32}})
    with pytest.raises(IdentityRefused) as bad:
        ops.check_decision(store, forged)
    assert bad.value.code is Code.DECISION_INVALID
    ops.revoke(store, "bo", by="root")
    assert ops.check_decision(store, before).name == "bo"  # signed while valid
    with pytest.raises(IdentityRefused) as late:
        ops.check_decision(store, before, now=datetime.now(UTC))  # not applied after
    assert late.value.code is Code.OPERATOR_REVOKED
    with pytest.raises(IdentityRefused) as gone:
        check_acting(store, me, DecisionKind.REVIEW)
    assert gone.value.code is Code.OPERATOR_REVOKED
    later = datetime.now(UTC) + timedelta(days=31)
    root = ops.get(store, "root")
    assert root is not None and root.refusal(None, later) == (
        Code.OPERATOR_EXPIRED, "identity root expired",
    )  # fmt: skip


def test_identities_are_signed_state_and_names_are_taken_once(tmp_path: Path) -> None:
    """A second add of a name is OPERATOR_EXISTS; a bootstrap after the first is refused;
    an identity version written without the signing key is never read."""
    settings, store = _home(tmp_path)
    path = _person(settings, store, "cy", Role.OPERATOR)
    with pytest.raises(IdentityRefused) as taken:
        ops.add(store, "cy", [Role.ADMIN], ops.load_credential(path).private.public_key(),
                by="root", days=1)  # fmt: skip
    assert taken.value.code is Code.OPERATOR_EXISTS
    with pytest.raises(IdentityRefused):
        ops.bootstrap(store, "eve", ops.load_credential(path).private.public_key(), days=1)
    # An insider writes a newer version (admin roles) without the deployment's key.
    raw = store.get("operators/_/cy/v0000000001.json").replace(b'"operator"', b'"admin"')
    store.put("operators/_/cy/v0000000002.json", raw)
    with pytest.raises(StateInvalid):
        versions.latest(store, "operators/_/cy/")


def test_identities_key_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    """A credential another account can read is refused (KEY_PERMISSIONS), not used."""
    settings, store = _home(tmp_path)
    path = _person(settings, store, "dee", Role.REVIEWER)
    path.chmod(0o644)
    with pytest.raises(ConfigurationError) as loose:
        ops.load_credential(path)
    assert loose.value.code is Code.KEY_PERMISSIONS
