"""The one data converter every client and worker uses.

Pydantic models in, JSON payloads out. Kept in one place so that the payload
codec (encryption) can be added for every process at once.
"""

from __future__ import annotations

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter


def data_converter() -> DataConverter:
    return pydantic_data_converter
