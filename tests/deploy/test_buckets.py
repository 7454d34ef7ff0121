"""The bucket configuration applies as written and protects what the code calls evidence.

Applied through moto's S3 (a real S3 API in process), so a malformed document
fails here as it would on AWS; what the policy denies is then checked against
the store's own prefixes (``custody.stores.s3.EVIDENCE_PREFIXES``) and the
scratch prefixes the code writes and deletes.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from custody import ids
from custody.stores.local import LocalStore
from custody.stores.s3 import EVIDENCE_PREFIXES
from starter.evidence.retention import evidence_keys
from tests.deploy.conftest import DEPLOY

S3 = DEPLOY / "s3"
#: Prefixes the code deletes from on purpose (staging, publish, the manual lane,
#: the ledger's lost-race index markers): a delete there must stay allowed.
DELETED_BY_CODE = ("intake/t/abc", "work/t/abc/page-1", "manual/t/abc.bin")


def _json(name: str) -> Any:
    return json.loads((S3 / name).read_text())


def _denied_deletes(policy: dict[str, Any], bucket: str) -> list[str]:
    patterns = []
    for st in policy["Statement"]:
        if st["Effect"] == "Deny" and "s3:DeleteObject" in st["Action"]:
            patterns += [r.removeprefix(f"arn:aws:s3:::{bucket}/") for r in st["Resource"]]
    return patterns


def test_buckets_apply_on_an_s3_api() -> None:
    """Both buckets take their lock, versioning, lifecycle, encryption and policy."""
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        for bucket, folder in (("custody-evidence", "evidence"), ("custody-witness", "witness")):
            s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
            s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
            s3.put_object_lock_configuration(
                Bucket=bucket, ObjectLockConfiguration=_json(f"{folder}/object-lock.json")
            )
            s3.put_public_access_block(
                Bucket=bucket,
                PublicAccessBlockConfiguration=_json(f"{folder}/public-access-block.json"),
            )
            s3.put_bucket_encryption(
                Bucket=bucket,
                ServerSideEncryptionConfiguration=_json(f"{folder}/encryption.json"),
            )
            s3.put_bucket_policy(Bucket=bucket, Policy=(S3 / folder / "policy.json").read_text())
        s3.put_bucket_lifecycle_configuration(
            Bucket="custody-evidence", LifecycleConfiguration=_json("evidence/lifecycle.json")
        )
        lock = s3.get_object_lock_configuration(Bucket="custody-witness")
        rule = lock["ObjectLockConfiguration"]["Rule"]["DefaultRetention"]
        assert rule["Mode"] == "COMPLIANCE" and rule["Days"] >= 3650
        rules = s3.get_bucket_lifecycle_configuration(Bucket="custody-evidence")["Rules"]
        assert _expiring(rules) == {"work/", "manual/"}


def _expiring(rules: list[dict[str, Any]]) -> set[str]:
    """Prefixes whose current objects a lifecycle rule deletes by age."""
    return {r["Filter"]["Prefix"] for r in rules if "Days" in r.get("Expiration", {})}


def test_buckets_policy_denies_deleting_evidence_and_nothing_the_code_deletes() -> None:
    """Every evidence prefix is covered by the deny; scratch the code removes is not."""
    denied = _denied_deletes(_json("evidence/policy.json"), "custody-evidence")
    for prefix in EVIDENCE_PREFIXES:
        probe = f"{prefix}t/abc/x" if prefix != "ledger/" else "ledger/t/tile/entries/000"
        assert any(fnmatch.fnmatchcase(probe, p) for p in denied), prefix
    for key in DELETED_BY_CODE:
        assert not any(fnmatch.fnmatchcase(key, p) for p in denied), key
    expiring = _expiring(_json("evidence/lifecycle.json")["Rules"])
    assert not [p for p in EVIDENCE_PREFIXES if p in expiring]
    # intake/ holds a quarantined document's only copy: only the worker's sweep,
    # which knows what is held (custody.stores.expiry.held), may expire it.
    assert "intake/" not in expiring


def test_buckets_only_the_retention_role_deletes_evidence_and_never_the_log(
    tmp_path: Path,
) -> None:
    """The retention role is exempt exactly where retention deletes; ledger and retention/ never."""
    statements = {st["Sid"]: st for st in _json("evidence/policy.json")["Statement"]}
    exempt = statements["DenyEvidenceDeletes"]
    role = exempt["Condition"]["ArnNotLike"]["aws:PrincipalArn"]
    assert role.endswith(":role/custody-retention")
    exempted = [r.removeprefix("arn:aws:s3:::custody-evidence/") for r in exempt["Resource"]]
    never = _denied_deletes({"Statement": [statements["DenyRecordDeletes"]]}, "custody-evidence")
    assert "Condition" not in statements["DenyRecordDeletes"]
    doc = "a" * 64
    for key in _retention_deletes(tmp_path, doc):
        if not key.startswith(("intake/", "work/", "manual/")):
            assert any(fnmatch.fnmatchcase(key, p) for p in exempted), key
    ledger = ("ledger/t/events/000000000001.json", "ledger/t/tile/0/x001/002", "ledger/t/batch/1")
    for key in (*ledger, f"retention/t/{doc}/deletion.json"):
        assert any(fnmatch.fnmatchcase(key, p) for p in never), key
        assert not any(fnmatch.fnmatchcase(key, p) for p in exempted), key


def test_buckets_deleted_evidence_versions_are_purged_by_lifecycle(tmp_path: Path) -> None:
    """Each prefix retention deletes from has a noncurrent-version expiry: a delete is final."""
    rules = _json("evidence/lifecycle.json")["Rules"]
    purged = {
        r["Filter"]["Prefix"]
        for r in rules
        if "NoncurrentVersionExpiration" in r and "Days" not in r.get("Expiration", {})
    }
    for key in _retention_deletes(tmp_path, "a" * 64):
        if not key.startswith(("work/", "manual/")):
            assert key.startswith(tuple(purged)), key


def _retention_deletes(root: Path, sha256: str) -> list[str]:
    """What ``custody retention apply`` deletes for one document, on a store holding all of it."""
    store = LocalStore(root)
    for key in _all_kinds(sha256):
        store.put(key, b"x")
    return evidence_keys(store, sha256, "t")


def _all_kinds(sha256: str) -> list[str]:
    s = f"t/{sha256}"
    return [
        ids.intake_key(sha256, "t"), ids.source_key(sha256, "t"), ids.record_key(sha256, "t"),
        ids.outcome_key(sha256, "t", "run-1"), ids.packet_key(sha256, "t"),
        ids.text_key(sha256, "t", "b" * 64), f"decisions/{s}/1-release.json",
        f"manual/{s}.bin", ids.work_page_key(sha256, "t", "a1", 1),
    ]  # fmt: skip
