"""structlog, configured once per process: JSON off a tty, console on one.

Temporal's stdlib loggers go through the same renderer. Log lines carry
workflow IDs, hashes, codes, counts and durations; never document text, file
names or page images.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from custody.settings import Settings


def configure_logging(settings: Settings, stream: Any = None) -> None:
    stream = stream or sys.stderr
    as_json = settings.log_format == "json" or (
        settings.log_format == "auto" and not stream.isatty()
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
