"""A store call inside OCR waits out a short outage instead of failing the attempt."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from custody.settings import Settings
from custody.stores.base import StoreUnavailable
from custody.stores.local import LocalStore
from custody.stores.patient import PatientStore
from custody.stores.s3 import S3Store, client_from_settings
from starter.chaos.outside import S3Endpoint


class _Flaky(LocalStore):
    """The real local store failing its first ``failures`` reads: a stand-in to inject faults."""

    def __init__(self, root: Path, failures: int) -> None:
        super().__init__(root)
        self.failures = failures

    def _fail(self) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise StoreUnavailable("injected outage")

    def get(self, key: str) -> bytes:
        self._fail()
        return super().get(key)

    def download(self, key: str, dst: io.RawIOBase, chunk_size: int = 1 << 20) -> int:  # type: ignore[override]
        if self.failures > 0:
            dst.write(b"partial")  # what a connection cut mid-body leaves behind
        self._fail()
        return super().download(key, dst, chunk_size)  # type: ignore[arg-type]


def test_patient_store_retries_with_heartbeats_until_the_store_answers(tmp_path: Path) -> None:
    """Two failures are waited out, calling ``on_wait`` each time; the caller sees the answer."""
    flaky = _Flaky(tmp_path, failures=0)
    flaky.put("a/b", b"text")
    flaky.failures = 2
    beats: list[float] = []
    store = PatientStore(flaky, 5.0, lambda: beats.append(time.monotonic()), first_s=0.01)
    assert store.get("a/b") == b"text"
    assert store.waits == 2 and len(beats) == 2


def test_patient_store_gives_up_after_its_budget(tmp_path: Path) -> None:
    """Past the budget the outage propagates, and the activity's retry policy decides."""
    flaky = _Flaky(tmp_path, failures=10_000)
    store = PatientStore(flaky, 0.3, first_s=0.05, cap_s=0.1)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        store.get("a/b")
    assert time.monotonic() - started < 2.0 and store.waits >= 2


def test_patient_store_download_discards_a_partial_body(tmp_path: Path) -> None:
    """A retried download starts the file again, so no bytes of a cut attempt remain."""
    flaky = _Flaky(tmp_path, failures=0)
    flaky.put("doc/x", b"0123456789")
    flaky.failures = 1
    out = io.BytesIO(b"head:")
    out.seek(0, io.SEEK_END)
    assert PatientStore(flaky, 5.0, first_s=0.01).download("doc/x", out) == 10
    assert out.getvalue() == b"head:0123456789"


def test_patient_store_rides_out_a_real_s3_outage() -> None:
    """moto's S3 server stopped for 1.5 s and back on its port: the read waits, then succeeds."""
    endpoint = S3Endpoint()
    endpoint.start()
    try:
        settings = Settings(
            store="s3",
            s3_endpoint_url=endpoint.url,
            s3_bucket="patient",
            s3_access_key_id=SecretStr("testing"),
            s3_secret_access_key=SecretStr("testing"),
        )
        client = client_from_settings(settings, connect_timeout=1.0, max_attempts=1)
        s3 = S3Store(client, "patient", "")
        s3.ensure_bucket()
        s3.put("k/v", b"value")
        endpoint.stop()
        restart = threading.Timer(1.5, endpoint.start)
        restart.start()
        store = PatientStore(s3, 30.0, first_s=0.2, cap_s=0.5)
        assert store.get("k/v") == b"value"
        assert store.waits >= 1
        restart.join()
    finally:
        endpoint.stop()


def test_staging_through_a_patient_store_hashes_only_the_retried_copy(tmp_path: Path) -> None:
    """A download cut once and retried stages exactly the object's bytes, and they verify."""
    import hashlib

    from activities.scratch import StagingArea

    flaky = _Flaky(tmp_path / "objects", failures=0)
    flaky.put("sources/x", b"scan bytes")
    flaky.failures = 1
    area = StagingArea(tmp_path / "staging")
    expected = hashlib.sha256(b"scan bytes").hexdigest()
    with area.staged(PatientStore(flaky, 5.0, first_s=0.01), "sources/x", expected) as path:
        assert path.read_bytes() == b"scan bytes"
    assert area.files() == []
