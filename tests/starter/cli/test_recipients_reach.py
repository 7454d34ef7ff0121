"""``custody recipients add`` refuses, with codes, what a release may not reach.

In this process, as the small CLI cases run (``tests.starter.cli.test_egress_cli._cli``):
registration needs only the settings and the store. Production refusals run with
``Settings(env="production")``; the names involved are literal addresses or
never resolved, so no resolver is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from custody.errors import Code
from custody.settings import Settings
from starter.cli.output import Exit
from tests.helpers import cli as _cli


def _add(settings: Settings, name: str, *channel: str) -> tuple[int, dict[str, object]]:
    rc, answer = _cli(settings, "recipients", "add", name, *channel, tenant="clinic-a")
    assert isinstance(answer, dict)
    return rc, answer


def test_recipients_add_refuses_the_metadata_address_and_custodys_bucket(tmp_path: Path) -> None:
    """From the defaults: the metadata address and Custody's own bucket, each with its code."""
    settings = Settings(home=tmp_path)
    rc, answer = _add(settings, "r", "--https", "https://169.254.169.254/")
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_ADDRESS_REFUSED)
    rc, answer = _add(settings, "r", "--s3", f"s3://{settings.s3_bucket}/x")
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_BUCKET_RESERVED)
    rc, answer = _add(settings, "r", "--outbox", str(settings.objects_dir / "out"))
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_BUCKET_RESERVED)
    rc, rows = _cli(settings, "recipients", "ls", tenant="clinic-a")
    assert rows == []


def test_recipients_add_refuses_the_witness_bucket(tmp_path: Path) -> None:
    """The witness bucket (here, as in the finding, custody-witness) is Custody's own."""
    settings = Settings(home=tmp_path, witness_s3_bucket="custody-witness")
    rc, answer = _add(settings, "r", "--s3", "s3://custody-witness/ledger/clinic-b")
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_BUCKET_RESERVED)


@pytest.mark.parametrize(
    "channel",
    [
        ("--https", "http://127.0.0.1:7233/"),
        ("--https", "https://[::1]:8234/codec/encode"),
        ("--outbox", "/srv/outbox"),
    ],
)
def test_recipients_add_refuses_loopback_and_outbox_in_production(
    tmp_path: Path, channel: tuple[str, str]
) -> None:
    """Production: loopback, plain HTTP and an unconfined outbox are refused."""
    settings = Settings(home=tmp_path, env="production")
    rc, answer = _add(settings, "r", *channel)
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_ADDRESS_REFUSED)


def test_recipients_add_s3_needs_its_own_credentials(tmp_path: Path) -> None:
    """No --s3-credentials: refused against AWS, accepted against a local endpoint in
    development; a reference is stored as given, and a secret in its place is refused."""
    aws = Settings(home=tmp_path)
    rc, answer = _add(aws, "r", "--s3", "s3://clinic-b-inbox/in")
    assert (rc, answer["error"]) == (Exit.REJECTED, Code.RECIPIENT_CREDENTIALS_MISSING)
    rc, answer = _add(aws, "r", "--s3", "s3://clinic-b-inbox/in", "--s3-credentials", "AKIA:secret")
    assert (rc, answer["error"]) == (Exit.USAGE, Code.USAGE)
    assert "secret" not in str(answer["message"])
    ref = "env:CLINIC_B_S3"
    rc, answer = _add(aws, "r", "--s3", "s3://clinic-b-inbox/in", "--s3-credentials", ref)
    assert (rc, answer["credentials"]) == (Exit.OK, ref)
    local = Settings(home=tmp_path, egress_s3_endpoint_url="http://127.0.0.1:9000")
    rc, answer = _add(local, "dev", "--s3", "s3://clinic-b-inbox/dev")
    assert rc == Exit.OK and "credentials" not in answer
