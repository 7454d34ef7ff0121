"""The stores ``custody bench ledger`` runs on: a counting wrapper, and S3 behind a delay.

:class:`Counting` passes every call to the store it wraps and counts reads
(``get``, ``exists``, ``list``, ``size``) and writes (``create``, ``put``,
``delete``). :func:`s3_store` starts moto's S3 server on loopback and a TCP
proxy in front of it that holds every chunk of a request for ``latency_ms``
before passing it on, so each round trip costs what a region away would.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from custody.stores import ObjectStore

_READS = frozenset({"get", "exists", "list", "size", "download"})
_WRITES = frozenset({"create", "create_from_file", "put", "delete"})


class Counting:
    """``inner`` with its calls counted (thread-safe; the count is all it adds)."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.reads = self.writes = 0
        self._lock = threading.Lock()

    def _count(self, name: str) -> None:
        with self._lock:
            if name in _READS:
                self.reads += 1
            elif name in _WRITES:
                self.writes += 1

    def create(self, key: str, data: bytes) -> bool:
        self._count("create")
        return self.inner.create(key, data)

    def create_from_file(self, key: str, src: BinaryIO) -> bool:
        self._count("create_from_file")
        return self.inner.create_from_file(key, src)

    def put(self, key: str, data: bytes) -> None:
        self._count("put")
        self.inner.put(key, data)

    def get(self, key: str) -> bytes:
        self._count("get")
        return self.inner.get(key)

    def download(self, key: str, dst: BinaryIO, chunk_size: int = 1 << 20) -> int:
        self._count("download")
        return self.inner.download(key, dst, chunk_size)

    def exists(self, key: str) -> bool:
        self._count("exists")
        return self.inner.exists(key)

    def size(self, key: str) -> int:
        self._count("size")
        return self.inner.size(key)

    def delete(self, key: str) -> None:
        self._count("delete")
        self.inner.delete(key)

    def list(self, prefix: str) -> Iterator[str]:
        self._count("list")
        return self.inner.list(prefix)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def s3_store(latency_ms: float) -> Iterator[Any]:
    """An ``S3Store`` on a fresh bucket of a moto server, reached through the delaying proxy."""
    import boto3
    from moto.server import ThreadedMotoServer

    from custody.stores.s3 import S3Store

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    with _delaying_proxy(port, latency_ms / 1000) as front:
        client = boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{front}",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
            region_name="us-east-1",
        )
        store = S3Store(client, f"bench-{uuid.uuid4().hex[:12]}")
        store.ensure_bucket()
        try:
            yield store
        finally:
            server.stop()


@contextmanager
def _delaying_proxy(target: int, delay_s: float) -> Iterator[int]:
    """A loopback TCP proxy to ``target`` that waits ``delay_s`` before each client chunk."""
    loop = asyncio.new_event_loop()
    port = _free_port()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, wait: float) -> None:
        try:
            while chunk := await reader.read(1 << 16):
                if wait:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(client_r, server_w, delay_s), pipe(server_r, client_w, 0))

    async def start() -> asyncio.Server:
        return await asyncio.start_server(handle, "127.0.0.1", port)

    server = loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
