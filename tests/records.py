"""A complete published record with made-up values, for the tests of what reads one."""

from __future__ import annotations

from datetime import UTC, datetime

from custody.models import ResultRecord


def result_record() -> ResultRecord:
    """Tenant ``t``'s record of ``a`` * 64: one page read at 0.9, no searchable PDF."""
    return ResultRecord(
        sha256="a" * 64,
        tenant="t",
        source_id=None,
        source_key=f"sources/t/{'a' * 64}",
        size_bytes=10,
        media_type="image/tiff",
        policy_version="limits-v1-000000000000",
        pages=1,
        page_confidences=[0.9],
        mean_confidence=0.9,
        confidence_band="high",
        text_key="results/t/x/text.txt",
        pages_key="results/t/x/pages.json",
        text_sha256="b" * 64,
        pages_sha256="c" * 64,
        chars=3,
        engine="easyocr",
        engine_version="1",
        ocr_params={},
        model_hashes={},
        ocr_seconds=1.0,
        transitions=[],
        attempts={"ocr": 1},
        workflow_id="doc-t-x",
        run_id="r",
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
