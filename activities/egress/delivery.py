"""Opening a recipient's channel: the one place that picks outbox, S3 or HTTPS.

Kept apart from ``channels`` (the packet and the spec), which both
channel modules build on, so nothing imports in a circle; an outbox or HTTPS
delivery still never loads boto3 (``store_push`` imports it for S3 only).
"""

from __future__ import annotations

from activities.egress import https_push, store_push
from activities.egress.channels import Channel, RecipientChannel, RetryPolicy, S3Access


def open_channel(
    spec: RecipientChannel,
    *,
    s3: S3Access | None = None,
    ca_file: str | None = None,
    policy: RetryPolicy | None = None,
) -> Channel:
    """The channel for ``spec``."""
    policy = policy or RetryPolicy()
    if spec.kind == "outbox":
        return store_push.outbox_channel(spec, policy)
    if spec.kind == "s3":
        return store_push.s3_channel(spec, s3 or S3Access(), ca_file, policy)
    return https_push.HttpsChannel(spec, ca_file=ca_file, policy=policy)
