"""The intake policy's values, in a module light enough for the inspection child.

``activities.inspect.inspection`` runs in a fresh process per document; importing
``pydantic_settings`` there (through ``custody.settings``) cost about 0.1 s of
CPU per document, more than the inspection itself. So the fields live here
on a plain model, and ``custody.settings.Limits`` adds only where they are
read from (``CUSTODY_LIMIT_*``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PolicyLimits(BaseModel):
    """The intake policy: what a document may be before any OCR is spent."""

    model_config = ConfigDict(frozen=True)

    max_bytes: int = Field(default=50 * 1024 * 1024, gt=0)
    max_pages: int = Field(default=50, gt=0)
    # Pixels of one page as rasterised for OCR (PDF at ``ocr_dpi``, images as is).
    max_page_pixels: int = Field(default=40_000_000, gt=0)
    # Pixels of any one image embedded in a PDF page (decompression bombs).
    max_image_pixels: int = Field(default=60_000_000, gt=0)
    # The longest side of a PDF page, in inches; the PDF spec allows 200.
    max_page_inches: float = Field(default=60.0, gt=0)
    ocr_dpi: int = Field(default=200, ge=72, le=600)
    # Decoding untrusted bytes runs in a child process under these bounds.
    decode_timeout_s: float = Field(default=30.0, gt=0)
    decode_memory_mb: int = Field(default=2048, gt=64)
    # Encrypted PDFs are refused even when the user password is empty: the
    # owner restricted the document, and we OCR exactly what we were given.
    allow_encrypted_empty_password: bool = False
    # Born-digital PDF pages: "prefer" reads the text layer the author typeset
    # (exact, milliseconds; the record lists those pages and their hashes) and
    # OCRs only pages without one; "ignore" OCRs every page (docs/integrators.md).
    text_layer: Literal["prefer", "ignore"] = "prefer"

    def policy_version(self) -> str:
        """A short, stable fingerprint of the policy, recorded with every result."""
        blob = json.dumps(self.model_dump(), sort_keys=True).encode()
        return "limits-v1-" + hashlib.sha256(blob).hexdigest()[:12]
