"""Opening a recipient's channel: the one place that picks outbox, S3 or HTTPS.

Kept apart from ``channels`` (the packet and the spec), which both
channel modules build on, so nothing imports in a circle; an outbox or HTTPS
delivery still never loads boto3 (``store_push`` imports it for S3 only).
"""

from __future__ import annotations

from activities.egress import https_push, store_push
from activities.egress.channels import AttemptLimits, Channel, RecipientChannel, S3Access
from activities.egress.reach import Reach


def open_channel(
    spec: RecipientChannel,
    *,
    s3: S3Access | None = None,
    ca_file: str | None = None,
    limits: AttemptLimits | None = None,
    reach: Reach | None = None,
) -> Channel:
    """The channel for ``spec``, once ``reach`` (the deployment's rules; development's
    by default) allows it; each of its ``deliver`` calls is one try within ``limits``."""
    limits, reach = limits or AttemptLimits(), reach or Reach()
    reach.check(spec)
    if spec.kind == "outbox":
        return store_push.outbox_channel(spec, limits)
    if spec.kind == "s3":
        return store_push.s3_channel(spec, s3 or S3Access(), ca_file, limits)
    return https_push.HttpsChannel(spec, ca_file=ca_file, limits=limits, reach=reach)
