"""``custody keys init|rotate|list|shred``: manage the keyring (custody.keys).

Nothing here prints key material: only key IDs, tenant scopes and states.
Shredding destroys a tenant's evidence: under its tenant policy's two-person rule
it waits for a second identity (``starter.evidence.deletions``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custody import ids
from custody.canonical import canonical_json
from custody.errors import Code, ConfigurationError, DocumentRejected
from custody.keys import keyring as keys
from custody.ledger.checkpoints import Notary, open_witness
from custody.ledger.events import Event, Ledger
from custody.ledger.signing import Signer, signer_from_settings
from custody.operators import DecisionKind, SignedDecision, acting
from custody.operators.journal import keep
from custody.settings import Settings
from custody.state.tenant_policy import deletions_need_two
from custody.stores import ObjectStore, open_raw_store, open_store
from custody.stores.system import SYSTEM_SCOPE
from starter.cli.output import Exit, emit, fail
from starter.cli.registry import add_command
from starter.evidence import deletions as dl


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    actions = add_command(sub, "keys").add_subparsers(dest="keys_action", required=True)
    init = actions.add_parser("init", parents=[common], help="create a new key set")
    init.add_argument("--development", action="store_true", help="mark it as development keys")
    init.set_defaults(handler=init_keys)
    rot = actions.add_parser(
        "rotate", parents=[common], help="add a payload key (--tenant T: a KEK version for T)"
    )
    rot.set_defaults(handler=rotate_keys)
    ls = actions.add_parser("list", parents=[common], help="key IDs and tenant key states")
    ls.set_defaults(handler=list_keys)
    shred = actions.add_parser("shred", parents=[common], help="destroy a tenant's key for good")
    shred.add_argument("scope", metavar="TENANT", help="tenant whose objects become unreadable")
    shred.add_argument("--confirm", required=True, metavar="TENANT", help="the tenant, again")
    shred.set_defaults(handler=shred_tenant)


def init_keys(args: argparse.Namespace, settings: Settings) -> int:
    if args.development and settings.env == "production":
        raise ConfigurationError(detail="development keys are refused when CUSTODY_ENV=production")
    ring = keys.init_keyring(keys.keys_dir(settings), development=args.development)
    info: dict[str, Any] = {"directory": str(ring.directory), "payload_key": ring.current()[0]}
    info["development"] = ring.development
    emit(args, info, f"keys created in {info['directory']} ({info['payload_key']})")
    return Exit.OK


def rotate_keys(args: argparse.Namespace, settings: Settings) -> int:
    """A new payload key; with ``--tenant T``, a new key-encryption key version for T."""
    directory = _directory(settings)
    person = acting(settings, open_store(settings), DecisionKind.KEY_ROTATE)
    if args.tenant:
        version = keys.rotate_kek(directory, args.tenant)
        info: dict[str, Any] = {"tenant": args.tenant, "kek_version": version}
        text = f"tenant {args.tenant}: new KEK version {version}; older objects still open"
    else:
        info = {"payload_key": keys.rotate(directory)}
        text = f"new payload key {info['payload_key']}; older keys still decrypt"
    _journal(settings, person.decide(DecisionKind.KEY_ROTATE, info), "key_rotated")
    emit(args, {**info, "by": person.name}, text)
    return Exit.OK


def _journal(settings: Settings, decision: SignedDecision, event: str) -> None:
    """The decision in the system ledger, under the key set in force now."""
    keep(open_store(settings), decision, tenant=None, subject="keys", event=event)


def list_keys(args: argparse.Namespace, settings: Settings) -> int:
    ring = keys.require_keyring(settings)
    newest = ring.current()[0]
    info = {
        "source": str(ring.directory) if ring.directory else "CUSTODY_KEYS_JSON",
        "development": ring.development,
        "payload_keys": [{"id": k, "newest": k == newest} for k in sorted(ring.payload)],
        "tenants": ring.scopes(),
    }
    lines = [f"keys: {info['source']}" + (" (DEVELOPMENT)" if ring.development else "")]
    lines += [f"payload {k}{' (newest)' if k == newest else ''}" for k in sorted(ring.payload)]
    lines += [f"tenant {scope}: {state}" for scope, state in ring.scopes().items()]
    emit(args, info, "\n".join(lines))
    return Exit.OK


#: The system log's event for a shred (custody.ledger, scope ``_system``).
SHRED_EVENT = "tenant_shredded"


def shred_tenant(args: argparse.Namespace, settings: Settings) -> int:
    """Destroy the tenant's KEK, then record who did it and when: a signed record beside
    the store's objects (plain, outside any KEK) and an event of the system log.

    Only a tenant's own scope: never ``_system`` (the ledger's), ``_`` or a name that
    shares a scope with system objects (``custody.ids.RESERVED_SCOPES``). Under a tenant
    policy's two-person rule the first identity's shred only files a request
    (``starter.evidence.deletions``); it is carried out once a second identity approves
    it (``custody deletions approve``), or by this command again after that.
    """
    if args.confirm != args.scope:
        return fail(args.json, Code.USAGE, "--confirm must repeat the tenant exactly", Exit.USAGE)
    try:
        ids.check_tenant(args.scope)
    except DocumentRejected as err:
        return fail(args.json, err.code, err.detail, Exit.USAGE)
    store = open_store(settings)
    person = acting(settings, store, DecisionKind.KEY_SHRED)
    decision = person.decide(DecisionKind.KEY_SHRED, {"tenant": args.scope})
    if _two_people(settings, args.scope):
        approved = _approved_request(store, args.scope)
        if approved is None:  # the tenant policy's two-person rule: file, destroy nothing
            filed = dl.propose(store, dl.new_request(person, "shred", args.scope, decision))
            info = {"state": "awaiting_approval", "request_id": filed.request_id}
            info |= {"tenant": args.scope, "requested_by": person.name}
            emit(args, info, f"shred of {args.scope} waits for a second person: "
                 f"custody deletions approve {filed.request_id}")  # fmt: skip
            return Exit.OK
        return _shredded(args, settings, *approved)
    return _shredded(args, settings, decision, None)


def _two_people(settings: Settings, tenant: str) -> bool:
    """Whether the tenant's policy asks for a second person (a shredded one: nothing left)."""
    if keys.require_keyring(settings).scopes().get(tenant) == "shredded":
        return False
    return deletions_need_two(open_store(settings), tenant)


def _approved_request(store: ObjectStore, tenant: str) -> tuple[SignedDecision, str] | None:
    """The newest approved shred request of ``tenant``: its decision and approver."""
    for row in reversed(dl.pending(store, tenant, every=False)):
        if row["action"] == "shred" and row["approved_by"] is not None:
            request = dl.load(store, str(row["request_id"]))
            return request.decision, str(row["approved_by"])
    return None


def _shredded(
    args: argparse.Namespace, settings: Settings, decision: SignedDecision, second: str | None
) -> int:
    tenant = str(decision.subject["tenant"])
    info = carry_out(settings, decision, second)
    emit(args, info, f"tenant {tenant} shredded; its objects are unreadable")
    return Exit.OK


def carry_out(settings: Settings, decision: SignedDecision, second: str | None) -> dict[str, Any]:
    """Destroy the KEK as ``decision`` decided (approved by ``second``, if two people);
    the signed record kept, its hash and the system log's event number."""
    tenant = str(decision.subject["tenant"])
    keys.shred(_directory(settings), tenant)
    _journal(settings, decision, SHRED_EVENT)
    signer = signer_from_settings(settings)
    record = {
        "event": SHRED_EVENT,
        "tenant": tenant,
        "at": datetime.now(UTC).isoformat(),
        "by": decision.by,
        "decision_sha256": decision.sha256(),
    }
    if second is not None:  # the two-person rule's second identity
        record["approved_by"] = second
    signed = {"record": record, "signature": signer.sign(canonical_json(record)).model_dump()}
    raw, key = open_raw_store(settings), f"shred/{tenant}.json"
    raw.create(key, canonical_json(signed))  # a second shred keeps the first record
    kept = raw.get(key)
    event = _logged(settings, signer, tenant, hashlib.sha256(kept).hexdigest(), decision.by)
    info: dict[str, Any] = json.loads(kept)["record"]
    return info | {"record_sha256": event.detail["record_sha256"], "event_seq": event.seq}


def _logged(
    settings: Settings, signer: Signer, tenant: str, record_sha256: str, actor: str
) -> Event:
    """The shred's event in the system log, checkpointed and witnessed at once."""
    store = open_store(settings)
    ledger = Ledger(store, SYSTEM_SCOPE, Notary(signer, open_witness(settings)))
    for seq in ledger.indexed_seqs(record_sha256):  # a rerun finds the first one's
        found = ledger.find(seq)
        if found is not None and found.kind == SHRED_EVENT:
            return found
    detail: dict[str, str | int | float | bool | list[str] | None] = {
        "tenant": tenant,
        "record_sha256": record_sha256,
    }
    return ledger.append(SHRED_EVENT, sha256=record_sha256, actor=actor, detail=detail)


def _directory(settings: Settings) -> Path:
    ring = keys.require_keyring(settings)
    if ring.directory is None:
        raise ConfigurationError(
            detail="keys come from CUSTODY_KEYS_JSON: change them in the secret store"
        )
    return ring.directory
