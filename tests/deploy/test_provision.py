"""``deploy/s3/provision.sh`` renders the bucket configuration for the store's key prefix.

The script runs as written against a stand-in ``aws`` on ``PATH`` (no fault, no
network: it records each call and keeps each document it is handed, as the real
CLI would upload it). The rendered documents are then applied to moto's S3
server over real HTTP, where the I/O worker's sweep runs against that bucket.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from custody import ids
from custody.settings import Settings
from custody.stores.expiry import expire, max_ages
from custody.stores.s3 import S3Store, client_from_settings
from tests.deploy.conftest import DEPLOY

# Keeps each file:// document as OUT/<bucket>.<subcommand>.json.
FAKE_AWS = """#!/bin/sh
echo "$*" >> "$OUT/calls"
[ "$1 $2" = "sts get-caller-identity" ] && { echo 123456789012; exit 0; }
sub=$2; bucket=
while [ $# -gt 0 ]; do
  case "$1" in
    --bucket) bucket=$2;;
    file://*) cp "${1#file://}" "$OUT/$bucket.$sub.json";;
  esac
  shift
done
"""
BUCKET = "acme-evidence"
PREFIX = "site-a"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """provision.sh run with CUSTODY_S3_PREFIX=/site-a/: the folder of what it applied."""
    out = tmp_path_factory.mktemp("provision")
    (out / "aws").write_text(FAKE_AWS)
    (out / "aws").chmod(0o755)
    env = {**os.environ, "PATH": f"{out}:{os.environ['PATH']}", "OUT": str(out)}
    env |= {"CUSTODY_S3_PREFIX": f"/{PREFIX}/", "EVIDENCE_BUCKET": BUCKET}
    subprocess.run(["sh", str(DEPLOY / "s3" / "provision.sh")], env=env, check=True, timeout=30)
    return out


def _doc(folder: Path, name: str) -> Any:
    return json.loads((folder / f"{BUCKET}.{name}.json").read_text())


def test_provision_lifecycle_rules_carry_the_store_prefix(rendered: Path) -> None:
    """Every rule's prefix starts with the store's prefix; the catch-all stays bucket-wide."""
    prefixes = [
        r["Filter"]["Prefix"] for r in _doc(rendered, "put-bucket-lifecycle-configuration")["Rules"]
    ]
    assert f"{PREFIX}/work/" in prefixes and f"{PREFIX}/records/" in prefixes
    assert all(p.startswith(f"{PREFIX}/") or p == "" for p in prefixes), prefixes


def test_provision_policy_protects_prefixed_keys_and_names_the_account_role(
    rendered: Path,
) -> None:
    """With a prefix the denies cover the keys the store writes; the role is this account's."""
    statements = {s["Sid"]: s for s in _doc(rendered, "put-bucket-policy")["Statement"]}
    exempt, never = statements["DenyEvidenceDeletes"], statements["DenyRecordDeletes"]
    role = exempt["Condition"]["ArnNotLike"]["aws:PrincipalArn"]
    assert role == "arn:aws:iam::123456789012:role/custody-retention"
    arn = f"arn:aws:s3:::{BUCKET}/{PREFIX}/"
    assert any(
        fnmatch.fnmatchcase(arn + ids.record_key("a" * 64, "t"), r) for r in exempt["Resource"]
    )
    events = f"{arn}ledger/t/events/000000000001.json"
    assert any(fnmatch.fnmatchcase(events, r) for r in never["Resource"])
    bundle = f"{arn}ledger/t/tile/entries/x001/002"  # a full entry bundle: never overwritten
    overwrites = statements["DenyLedgerOverwrites"]
    assert any(fnmatch.fnmatchcase(bundle, r) for r in never["Resource"])
    assert any(fnmatch.fnmatchcase(bundle, r) for r in overwrites["Resource"])
    assert overwrites["Condition"] == {"Null": {"s3:if-none-match": "true"}}
    assert statements["DenyVersionDeletes"]["Resource"] == [f"arn:aws:s3:::{BUCKET}/*"]


def test_provision_held_intake_survives_on_the_provisioned_bucket(
    rendered: Path, moto_endpoint: str, tmp_path: Path
) -> None:
    """On the bucket as provisioned, the sweep expires old intake but keeps a held only copy."""
    settings = Settings(
        home=tmp_path, store="s3", s3_endpoint_url=moto_endpoint, s3_prefix=PREFIX,
        s3_bucket=f"custody-{uuid.uuid4().hex[:12]}",
        s3_access_key_id=SecretStr("testing"), s3_secret_access_key=SecretStr("testing"),
    )  # fmt: skip
    client = client_from_settings(settings)
    store = S3Store(client, settings.s3_bucket, PREFIX)
    store.ensure_bucket(object_lock=True)
    client.put_bucket_versioning(
        Bucket=settings.s3_bucket, VersioningConfiguration={"Status": "Enabled"}
    )
    client.put_bucket_lifecycle_configuration(
        Bucket=settings.s3_bucket,
        LifecycleConfiguration=_doc(rendered, "put-bucket-lifecycle-configuration"),
    )
    held, loose = "1" * 64, "2" * 64
    for sha in (held, loose):
        store.create(ids.intake_key(sha, "t"), b"x")
    store.create(ids.outcome_key(held, "t", "run-1"), b"{}")  # quarantined at staging
    later = datetime.now(UTC) + timedelta(days=8)
    gone = [s.key for s in expire(store, max_ages(settings), later)]
    assert gone == [ids.intake_key(loose, "t")]
    assert store.exists(ids.intake_key(held, "t"))
    # ... and no lifecycle rule deletes the held object by age behind the sweep's back.
    rules = client.get_bucket_lifecycle_configuration(Bucket=settings.s3_bucket)["Rules"]
    key = f"{PREFIX}/{ids.intake_key(held, 't')}"
    by_age = [r for r in rules if "Days" in r.get("Expiration", {})]
    assert by_age and not [r for r in by_age if key.startswith(r["Filter"]["Prefix"])]
