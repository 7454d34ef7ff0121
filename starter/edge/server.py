"""The edge's uvicorn: bounded headers in size and in time, short keep-alive.

uvicorn bounds idle keep-alive connections, and h11 the bytes of an
incomplete request head, but nothing bounds how long a head may take to
arrive: a client sending one header byte a second (slowloris) holds its
connection for ever. The protocol below closes a connection whose request
head is not complete ``header_timeout_s`` after the connection opened or the
head's first bytes arrived. Bodies have their own minimum rate
(:func:`starter.edge.upload.paced`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from custody.settings import Settings


class _BoundedHeads(H11Protocol):
    header_timeout_s = 10.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        # The first bytes of a later request's head start its clock; between
        # requests an idle connection is uvicorn's keep-alive timeout's to close.
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the head is in: the body has its own minimum rate

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_due)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_due(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def config(app: Any, settings: Settings, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with the edge's timeouts and header bound."""
    # A class per configuration: uvicorn builds the protocol from the class alone.
    protocol = type(
        "EdgeProtocol", (_BoundedHeads,), {"header_timeout_s": settings.edge_header_timeout_s}
    )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=protocol,
        timeout_keep_alive=max(1, round(settings.edge_keep_alive_s)),
        h11_max_incomplete_event_size=settings.edge_max_header_bytes,
    )


class Embedded(uvicorn.Server):
    """The edge served inside a larger command (a benchmark) that owns SIGINT and SIGTERM.

    uvicorn's own handlers would shut the edge first, and the command's requests
    still in flight would fail with a connection error (exit 1) instead of the
    command stopping everything it started and exiting 130 or 143.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
