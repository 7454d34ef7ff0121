#!/bin/sh
# One-off set-up of the trial (runs in the custody image, as the custody user):
# the namespace, Custody's search attributes, the bucket, development keys.
set -eu
ns=${CUSTODY_TEMPORAL_NAMESPACE:-custody}
until temporal operator cluster health --address "$CUSTODY_TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  sleep 2
done
temporal operator namespace describe -n "$ns" --address "$CUSTODY_TEMPORAL_ADDRESS" >/dev/null 2>&1 ||
  temporal operator namespace create -n "$ns" --address "$CUSTODY_TEMPORAL_ADDRESS"
for sa in CustodyState CustodyReason CustodyTenant CustodySourceId CustodySha256 CustodyRecipient; do
  temporal operator search-attribute create -n "$ns" --address "$CUSTODY_TEMPORAL_ADDRESS" \
    --name "$sa" --type Keyword >/dev/null 2>&1 || true
done
# The evidence bucket, Object Lock on (it can only be turned on at creation).
python - <<'PY'
import os
import boto3
s3 = boto3.client("s3", endpoint_url=os.environ["CUSTODY_S3_ENDPOINT_URL"],
                  aws_access_key_id=os.environ["CUSTODY_S3_ACCESS_KEY_ID"],
                  aws_secret_access_key=os.environ["CUSTODY_S3_SECRET_ACCESS_KEY"],
                  region_name=os.environ.get("CUSTODY_S3_REGION", "us-east-1"))
names = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
for bucket in (os.environ["CUSTODY_S3_BUCKET"], "custody-witness"):
    if bucket not in names:
        s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
PY
[ -n "$(ls -A /var/lib/custody/keys 2>/dev/null)" ] || custody keys init --development
echo "custody trial ready"
