"""An S3 recipient's own credentials: never the workers' own chain.

The workers' credentials can write Custody's evidence and witness buckets, so
a release written with them could land there (``activities.egress.reach``
refuses those buckets by name too). Each S3 recipient is registered with a
reference to credentials of its own (``custody recipients add NAME --s3 URL
--s3-credentials REF``), read at each delivery and never stored or logged:

    env:NAME      an environment variable of the I/O worker holding the JSON below
    file:/PATH    a file holding it (a mounted secret)

    {"access_key_id": "...", "secret_access_key": "...", "session_token": "..."}   a key pair
    {"role_arn": "arn:aws:iam::...:role/...", "external_id": "..."}                 a role

A role is assumed for each delivery (STS at ``CUSTODY_EGRESS_STS_ENDPOINT_URL``,
else AWS): the workers' chain then only asks STS, and the role, whose trust
policy names them, is what may write the recipient's bucket. A recipient with
no reference is refused (``RECIPIENT_CREDENTIALS_MISSING``) except in
development against a local endpoint (moto, MinIO on loopback), where the
``CUSTODY_EGRESS_S3_*`` keys (or none) apply as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, model_validator

from activities.egress.addresses import literal
from activities.egress.channels import S3Access
from custody.errors import Code, ConfigurationError, EgressRefused
from custody.models import fields_among
from custody.settings import Settings

_MAX_SECRET = 64 * 1024


class _Secret(BaseModel):
    """What a reference holds: a key pair, or a role to assume."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    session_token: SecretStr | None = None
    role_arn: str | None = None
    external_id: SecretStr | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> _Secret:
        pair = self.access_key_id is not None and self.secret_access_key is not None
        if pair == (self.role_arn is not None):
            raise ValueError("credentials hold either a key pair or a role_arn")
        return self


def required(credentials: str | None, settings: Settings) -> None:
    """Refuse an S3 recipient without credentials of its own, where they are required."""
    if credentials is None and not _local_development(settings):
        raise EgressRefused(
            Code.RECIPIENT_CREDENTIALS_MISSING,
            "an S3 recipient needs --s3-credentials (development against a local endpoint aside)",
        )


def recipient_access(credentials: str | None, settings: Settings) -> S3Access:
    """How to write this recipient's bucket: its own keys, or its role's for this delivery."""
    required(credentials, settings)
    endpoint, region = settings.egress_s3_endpoint_url, settings.egress_s3_region
    if credentials is None:  # development against a local endpoint
        return S3Access(
            endpoint_url=endpoint,
            region=region,
            access_key_id=settings.egress_s3_access_key_id,
            secret_access_key=settings.egress_s3_secret_access_key,
        )
    secret = _read(credentials)
    if secret.role_arn is not None:
        secret = _assumed(secret, settings)
    # The key pair and, for a role, its session token: the fields both hold.
    return S3Access(endpoint_url=endpoint, region=region, **fields_among(S3Access, secret))


def _local_development(settings: Settings) -> bool:
    endpoint = settings.egress_s3_endpoint_url
    host = urlsplit(endpoint).hostname if endpoint else None
    address = literal(host) if host else None
    local = host == "localhost" or (address is not None and address.is_loopback)
    return settings.env == "development" and local


def _read(ref: str) -> _Secret:
    """The secret a reference names; CONFIGURATION (an operator's fix) when it cannot be read."""
    kind, _, name = ref.partition(":")
    try:
        if kind == "env":
            raw = os.environ[name]
        else:
            with Path(name).open("rb") as handle:
                raw = handle.read(_MAX_SECRET).decode()
        return _Secret.model_validate(json.loads(raw))
    except KeyError:
        raise ConfigurationError(detail="the recipient's credentials variable is not set") from None
    except (OSError, UnicodeDecodeError):
        raise ConfigurationError(detail="the recipient's credentials file cannot be read") from None
    except (ValueError, ValidationError):  # never the message: it could quote the secret
        raise ConfigurationError(detail="the recipient's credentials are not valid") from None


def _assumed(secret: _Secret, settings: Settings) -> _Secret:
    """Temporary keys of the recipient's role, for this delivery only."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    sts = boto3.client(
        "sts", endpoint_url=settings.egress_sts_endpoint_url, region_name=settings.egress_s3_region
    )
    extra = {"ExternalId": secret.external_id.get_secret_value()} if secret.external_id else {}
    try:
        answer = sts.assume_role(
            RoleArn=str(secret.role_arn), RoleSessionName="custody-release", **extra
        )
    except (BotoCoreError, ClientError) as exc:
        raise ConfigurationError(
            detail=f"assuming the recipient's role: {type(exc).__name__}"
        ) from exc
    keys = answer["Credentials"]
    return _Secret(
        access_key_id=SecretStr(keys["AccessKeyId"]),
        secret_access_key=SecretStr(keys["SecretAccessKey"]),
        session_token=SecretStr(keys["SessionToken"]),
    )
