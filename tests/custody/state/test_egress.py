"""The egress registry in a real local store: versioned policies, recipients, egress events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custody import egress as eg
from custody.errors import EgressRefused, StateInvalid
from custody.ledger.events import Ledger
from custody.state.egress import (
    add_policy,
    add_recipient,
    current_policy,
    egress_events,
    get_recipient,
    list_policies,
    list_recipients,
    pinned_policy,
    record_egress,
    revoke_recipient,
)
from custody.stores.local import LocalStore
from tests.helpers import recipient

TENANT = "clinic-a"


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


def _recipient(name: str = "clinic-b", target: str = "/srv/outbox") -> eg.Recipient:
    return recipient(TENANT, name, target)


def test_policy_versions_are_immutable_and_newest_is_current(store: LocalStore) -> None:
    """A changed body is the next version; the first version's bytes stay as they were."""
    v1 = eg.Policy(name="text-only", include=("text",), c2pa=False)
    v2 = eg.Policy(name="text-only", include=("text", "searchable_pdf"))
    assert add_policy(store, TENANT, v1) == (1, v1.sha256())
    assert add_policy(store, TENANT, v2) == (2, v2.sha256())
    assert store.get(eg.policy_key(TENANT, "text-only", 1)) == v1.canonical()
    assert not store.create(eg.policy_key(TENANT, "text-only", 1), v2.canonical())
    assert current_policy(store, TENANT, "text-only") == v2
    assert pinned_policy(store, TENANT, v1.sha256()) == v1


def test_policy_same_body_is_the_same_version(store: LocalStore) -> None:
    """Storing an identical body again returns its existing version, not a new one."""
    policy = eg.Policy(name="pdf", include=("searchable_pdf",))
    first = add_policy(store, TENANT, policy)
    again = add_policy(store, TENANT, eg.Policy(name="pdf", include=("searchable_pdf",)))
    assert first == again == (1, policy.sha256())
    assert [r["version"] for r in list_policies(store, TENANT) if r["name"] == "pdf"] == [1]


@pytest.mark.parametrize("name", sorted(eg.BUILTIN_POLICIES))
def test_policy_builtin_names_cannot_be_redefined(store: LocalStore, name: str) -> None:
    """``default``, ``read`` and ``export`` are refused as names of stored policies."""
    with pytest.raises(EgressRefused) as refused:
        add_policy(store, TENANT, eg.Policy(name=name, include=("text",)))
    assert refused.value.code == "POLICY_INVALID"
    assert current_policy(store, TENANT, name) == eg.BUILTIN_POLICIES[name]


def test_policy_pinned_by_hash_is_rehashed_on_read(store: LocalStore) -> None:
    """A stored policy whose bytes were rewritten under its hash is refused, not used."""
    policy = eg.Policy(name="strict", include=("searchable_pdf",), expires_after_days=30)
    _, sha = add_policy(store, TENANT, policy)
    looser = eg.Policy(name="strict", include=("searchable_pdf", "text"))
    store.put(eg.policy_by_hash_key(TENANT, sha), looser.canonical())
    with pytest.raises(EgressRefused) as refused:
        pinned_policy(store, TENANT, sha)
    assert refused.value.code == "POLICY_INVALID"


def test_policy_unknown_hash_or_name_is_policy_unknown(store: LocalStore) -> None:
    """Neither an unknown name nor an unknown hash resolves to any policy."""
    with pytest.raises(EgressRefused) as by_name:
        current_policy(store, TENANT, "nothing")
    with pytest.raises(EgressRefused) as by_hash:
        pinned_policy(store, TENANT, "0" * 64)
    assert by_name.value.code == by_hash.value.code == "POLICY_UNKNOWN"


def test_recipient_registration_is_create_only(store: LocalStore) -> None:
    """A second registration under a taken name never replaces the first."""
    assert add_recipient(store, _recipient())
    assert not add_recipient(store, _recipient(target="/elsewhere"))
    assert get_recipient(store, TENANT, "clinic-b").target == "/srv/outbox"


def test_recipient_revocation_is_create_only_and_final(store: LocalStore) -> None:
    """Revocation happens once, and a re-registration cannot undo it."""
    add_recipient(store, _recipient())
    assert revoke_recipient(store, TENANT, "clinic-b", by="op@host")
    assert not revoke_recipient(store, TENANT, "clinic-b", by="other@host")
    assert not add_recipient(store, _recipient())
    with pytest.raises(EgressRefused) as revoked:
        get_recipient(store, TENANT, "clinic-b")
    assert revoked.value.code == "RECIPIENT_REVOKED"
    assert [(r["name"], r["revoked"]) for r in list_recipients(store, TENANT)] == [
        ("clinic-b", True)
    ]


def test_recipient_revocation_is_a_signed_version_deleting_it_is_refused(
    store: LocalStore, tmp_path: Path
) -> None:
    """The revocation is a signed, chained version logged in the system log: deleting it
    does not un-revoke the recipient, it is refused as a rollback (STATE_INVALID), by this
    reader and by a fresh one."""
    add_recipient(store, _recipient())
    revoke_recipient(store, TENANT, "clinic-b", by="op@host")
    prefix = eg.recipient_revocation_prefix(TENANT, "clinic-b")
    (version,) = list(store.list(prefix))
    assert json.loads(store.get(version))["sig"]["kid"]
    store.delete(version)
    for reader in (store, LocalStore(tmp_path / "objects")):
        with pytest.raises(StateInvalid):
            get_recipient(reader, TENANT, "clinic-b")


def test_recipient_revoked_before_versions_stays_revoked(store: LocalStore) -> None:
    """A revocation marker from before versions is still honoured; revoking again writes
    the signed version."""
    add_recipient(store, _recipient())
    store.create(eg.recipient_revoked_key(TENANT, "clinic-b"), b'{"by": "old"}')
    with pytest.raises(EgressRefused):
        get_recipient(store, TENANT, "clinic-b")
    assert revoke_recipient(store, TENANT, "clinic-b", by="op@host")
    assert list(store.list(eg.recipient_revocation_prefix(TENANT, "clinic-b")))


def test_recipient_of_another_tenant_is_unknown(store: LocalStore) -> None:
    """Recipients are per tenant: another tenant cannot name this one's."""
    add_recipient(store, _recipient())
    with pytest.raises(EgressRefused) as unknown:
        get_recipient(store, "clinic-z", "clinic-b")
    assert unknown.value.code == "RECIPIENT_UNKNOWN"
    assert list_recipients(store, "clinic-z") == []


def test_egress_events_are_listed_from_the_index_with_every_field(store: LocalStore) -> None:
    """``egress_events`` finds each event through its index with kind, actor, hashes and time."""
    docs = ["a" * 64, "b" * 64]
    record_egress(
        store,
        TENANT,
        eg.EgressKind.READ,
        actor="key-1",
        policy=eg.READ_POLICY,
        documents=docs[:1],
        bytes_sha256="c" * 64,
        size=10,
    )
    record_egress(
        store,
        TENANT,
        eg.EgressKind.RELEASE,
        actor="op@host",
        policy=eg.DEFAULT_POLICY,
        documents=docs,
        bytes_sha256="d" * 64,
        size=20,
        release_id="e" * 32,
        recipient="clinic-b",
        once=eg.release_event_key(TENANT, "e" * 32),
    )
    records = list(egress_events(store, TENANT))
    assert [(r.kind, r.actor, r.recipient) for r in records] == [
        (eg.EgressKind.READ, "key-1", None),
        (eg.EgressKind.RELEASE, "op@host", "clinic-b"),
    ]
    assert records[1].documents == docs and records[1].bytes_sha256 == "d" * 64
    assert records[1].policy_sha256 == eg.DEFAULT_POLICY.sha256()
    # An event of several documents names none of them: salted hashes, the salts sealed apart.
    stored = Ledger(store, TENANT).entry(records[1].seq)
    assert not any(doc.encode() in stored for doc in docs) and b"documents_salted" in stored
    assert records[0].seq < records[1].seq
    assert list(egress_events(store, "clinic-z")) == []
