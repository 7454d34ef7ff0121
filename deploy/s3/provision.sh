#!/bin/sh
# Create Custody's two buckets with the AWS CLI, from the JSON beside this file.
#
#   custody-evidence  Object Lock enabled (per-object COMPLIANCE retention is set by
#                     the store on evidence prefixes only: CUSTODY_S3_OBJECT_LOCK_DAYS),
#                     versioned, work/ and manual/ expiring (intake/ is swept by the
#                     I/O worker, which holds a quarantined document's only copy),
#                     deleted evidence versions purged once unlocked, deletes of
#                     evidence denied to all but the retention role.
#   custody-witness   the ledger checkpoints' witness (CUSTODY_WITNESS_S3_BUCKET):
#                     Object Lock with a default COMPLIANCE retention of 10 years,
#                     nothing deletable. Give it to another account if you can: a
#                     witness the same administrator controls witnesses less.
#
# The JSON names the default bucket and no key prefix; they are rendered here with
# EVIDENCE_BUCKET and CUSTODY_S3_PREFIX (the store's prefix: every key it writes
# starts with it), and the retention role with RETENTION_ROLE_ARN (default: the
# role custody-retention in this account), the one principal `custody retention
# apply` may delete evidence as (deploy/RUNBOOK.md, "Retention").
#
# Object Lock can only be turned on when a bucket is created, and then versioning
# is on for good. Usage: REGION=eu-west-1 CUSTODY_S3_PREFIX=site-a sh deploy/s3/provision.sh
set -eu
cd "$(dirname "$0")"
REGION=${REGION:-eu-west-1}
EVIDENCE=${EVIDENCE_BUCKET:-custody-evidence}
WITNESS=${WITNESS_BUCKET:-custody-witness}
# As custody.stores.s3.S3Store: surrounding slashes dropped, one added.
PREFIX=$(printf '%s' "${CUSTODY_S3_PREFIX:-}" | sed 's#^/*##; s#/*$##')
if [ -n "$PREFIX" ]; then PREFIX="$PREFIX/"; fi
if [ -z "${RETENTION_ROLE_ARN:-}" ]; then
  ACCOUNT=$(aws sts get-caller-identity --query Account --output text)
  RETENTION_ROLE_ARN="arn:aws:iam::$ACCOUNT:role/custody-retention"
fi
RENDERED=$(mktemp -d)
trap 'rm -rf "$RENDERED"' EXIT

# Bucket names everywhere; the prefix before each key pattern (bucket-wide
# statements, "custody-evidence/*", stay bucket-wide); the retention role.
render_policy() {
  sed -e "s#:::custody-$2/\([a-z]\)#:::custody-$2/$PREFIX\1#g" -e "s#custody-$2#$1#g" \
    -e "s#arn:aws:iam::\*:role/custody-retention#$RETENTION_ROLE_ARN#g" \
    "$2/policy.json" > "$RENDERED/$2-policy.json"
}

make_bucket() {
  aws s3api create-bucket --bucket "$1" --region "$REGION" \
    --create-bucket-configuration "LocationConstraint=$REGION" \
    --object-lock-enabled-for-bucket
  aws s3api put-bucket-versioning --bucket "$1" --versioning-configuration Status=Enabled
  aws s3api put-public-access-block --bucket "$1" \
    --public-access-block-configuration "file://$2/public-access-block.json"
  aws s3api put-bucket-encryption --bucket "$1" \
    --server-side-encryption-configuration "file://$2/encryption.json"
  aws s3api put-object-lock-configuration --bucket "$1" \
    --object-lock-configuration "file://$2/object-lock.json"
  render_policy "$1" "$2"
  aws s3api put-bucket-policy --bucket "$1" --policy "file://$RENDERED/$2-policy.json"
}

make_bucket "$EVIDENCE" evidence
# Every rule's prefix but the catch-all "" (incomplete uploads, bucket-wide).
sed "s#\"Prefix\": \"\([a-z]\)#\"Prefix\": \"$PREFIX\1#" evidence/lifecycle.json \
  > "$RENDERED/lifecycle.json"
aws s3api put-bucket-lifecycle-configuration --bucket "$EVIDENCE" \
  --lifecycle-configuration "file://$RENDERED/lifecycle.json"
make_bucket "$WITNESS" witness
