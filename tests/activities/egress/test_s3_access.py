"""S3 recipients write with credentials of their own, against moto's S3 and STS servers.

The workers' own chain is set in the environment (``AWS_ACCESS_KEY_ID``) to a
key the recipient's client must not carry; a key pair behind ``env:`` and a
role behind ``file:`` (assumed through moto's STS) are each what the delivery
client signs with. Refusals come before anything is rendered: the prepare
step refuses an S3 recipient without credentials outside development
against a local endpoint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.egress.channels import RecipientChannel
from activities.egress.delivery import open_channel
from activities.egress.s3_access import recipient_access
from activities.release import ReleaseActivities
from activities.scratch import StagingArea
from custody import egress as eg
from custody import release_steps as steps
from custody.errors import Code, ConfigurationError, EgressRefused
from custody.ledger.signing import signer_from_settings
from custody.settings import Settings
from custody.state.egress import add_recipient
from custody.stores.local import LocalStore
from tests.activities.egress.test_channels import _bucket, _packet
from tests.helpers import recipient

ROLE = "arn:aws:iam::123456789012:role/clinic-b-inbox-writer"


@pytest.fixture(autouse=True)
def _workers_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers' own credentials, which no recipient's client may use."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "WORKERSOWNKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "workers-own-secret")


def _signing_key(channel: Any) -> str:
    return str(channel.store.client._get_credentials().access_key)


def _settings(tmp_path: Path, endpoint: str | None, **kw: Any) -> Settings:
    return Settings(home=tmp_path, egress_s3_endpoint_url=endpoint, **kw)


def test_s3_access_key_pair_from_env_writes_the_recipients_bucket(
    moto_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``env:NAME`` holding a key pair: the client signs with it, and the packet arrives."""
    pair = {"access_key_id": "RECIPIENTKEY", "secret_access_key": "recipient-secret"}
    monkeypatch.setenv("CLINIC_B_S3", json.dumps(pair))
    bucket, client = _bucket(moto_endpoint)
    access = recipient_access("env:CLINIC_B_S3", _settings(tmp_path, moto_endpoint))
    channel = open_channel(RecipientChannel.of("s3", f"s3://{bucket}/in"), s3=access)
    assert _signing_key(channel) == "RECIPIENTKEY"
    assert channel.deliver(_packet()).already_delivered is False
    assert client.get_object(Bucket=bucket, Key="in/rel-0001/notes.txt")["Body"].read()


def test_s3_access_role_from_file_is_assumed_for_the_delivery(
    moto_endpoint: str, tmp_path: Path
) -> None:
    """``file:/PATH`` naming a role: STS answers temporary keys, and those sign the writes."""
    ref = tmp_path / "clinic-b.json"
    ref.write_text(json.dumps({"role_arn": ROLE, "external_id": "clinic-b"}))
    bucket, client = _bucket(moto_endpoint)
    settings = _settings(tmp_path, moto_endpoint, egress_sts_endpoint_url=moto_endpoint)
    access = recipient_access(f"file:{ref}", settings)
    assert access.session_token is not None
    channel = open_channel(RecipientChannel.of("s3", f"s3://{bucket}"), s3=access)
    assert _signing_key(channel) not in ("WORKERSOWNKEY", "")
    channel.deliver(_packet())
    assert client.head_object(Bucket=bucket, Key="rel-0001/manifest.json")


def test_s3_access_unreadable_references_are_configuration_never_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing variable, a missing file, or a body that is no credential: CONFIGURATION."""
    settings = _settings(tmp_path, None)
    monkeypatch.setenv("NOT_CREDENTIALS", '{"password": "hunter2"}')
    for ref in ("env:NOT_SET_ANYWHERE", f"file:{tmp_path}/absent.json", "env:NOT_CREDENTIALS"):
        with pytest.raises(ConfigurationError) as info:
            recipient_access(ref, settings)
        assert "hunter2" not in str(info.value)


def test_s3_access_refused_without_credentials_unless_local_development(tmp_path: Path) -> None:
    """No reference: AWS or production refuse; development against loopback falls back."""
    for settings in (
        _settings(tmp_path, None),
        _settings(tmp_path, "http://127.0.0.1:9000", env="production"),
    ):
        with pytest.raises(EgressRefused) as info:
            recipient_access(None, settings)
        assert info.value.code == Code.RECIPIENT_CREDENTIALS_MISSING
    assert (
        recipient_access(None, _settings(tmp_path, "http://127.0.0.1:9000")).access_key_id is None
    )


def test_release_prepare_refuses_an_s3_recipient_without_credentials(tmp_path: Path) -> None:
    """Prepare refuses, before anything renders: no credentials, or Custody's own bucket."""
    settings = Settings(home=tmp_path)
    store = LocalStore(settings.objects_dir)
    acts = ReleaseActivities(
        store, StagingArea(tmp_path / "staging"), signer_from_settings(settings), settings
    )
    cases = {
        "no-keys": ("s3://clinic-b-inbox/in", None, Code.RECIPIENT_CREDENTIALS_MISSING),
        "own-bucket": (f"s3://{settings.s3_bucket}/in", "env:X", Code.RECIPIENT_BUCKET_RESERVED),
    }
    for name, (target, ref, code) in cases.items():
        registered = recipient("clinic-a", name, target, eg.ChannelKind.S3)
        add_recipient(store, registered.model_copy(update={"credentials": ref}))
        inp = steps.PrepareInput(
            tenant="clinic-a", recipient=name, policy_sha256=eg.DEFAULT_POLICY.sha256(),
            documents=["0" * 64],
        )  # fmt: skip
        with pytest.raises(ApplicationError) as info:
            ActivityEnvironment().run(acts.prepare, inp)
        assert (info.value.type, info.value.non_retryable) == (code, True)
    assert not os.path.exists(settings.objects_dir / "egress")  # nothing rendered or recorded
