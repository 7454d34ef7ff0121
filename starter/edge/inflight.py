"""Per-tenant caps on uploads in flight at the edge: how many at once, and their bytes.

Admission bounds count documents already accepted; these count bodies still
arriving. Without them one tenant could open any number of slow uploads, each
holding a connection, a staging file and up to the byte limit of disk. Bytes
are reserved from the declared ``Content-Length`` before the body is read, and
grown as a body without one (or longer than declared) streams in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from custody.errors import Code, UploadError

#: What a refused client is told to wait: an upload in flight ends within seconds.
RETRY_S = 5.0


class Ticket:
    """One upload's place: its tenant and the bytes it holds."""

    def __init__(self, caps: InFlight, tenant: str) -> None:
        self._caps, self.tenant, self.held = caps, tenant, 0

    def hold(self, total: int) -> None:
        """Hold ``total`` bytes for this upload (only ever grows); 429 past the tenant's cap."""
        if total > self.held:
            self._caps.grow(self, total - self.held)


class InFlight:
    """The uploads each tenant has open, and their bytes; shared by one edge's requests."""

    def __init__(self, max_uploads: int, max_bytes: int) -> None:
        self.max_uploads, self.max_bytes = max_uploads, max_bytes
        self.uploads: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()

    @contextmanager
    def opened(self, tenant: str, declared: int | None) -> Iterator[Ticket]:
        """A place for one upload of ``tenant``, given back when the block ends."""
        if self.uploads[tenant] >= self.max_uploads:
            raise UploadError(
                429, Code.INFLIGHT_UPLOADS, f"more than {self.max_uploads} uploads open", RETRY_S
            )
        ticket = Ticket(self, tenant)
        self.uploads[tenant] += 1
        try:
            ticket.hold(declared or 0)
            yield ticket
        finally:
            self.uploads[tenant] -= 1
            self.bytes[tenant] -= ticket.held
            for counts in (self.uploads, self.bytes):
                if counts[tenant] <= 0:
                    del counts[tenant]  # idle tenants cost nothing

    def grow(self, ticket: Ticket, more: int) -> None:
        if self.bytes[ticket.tenant] + more > self.max_bytes:
            raise UploadError(
                429, Code.INFLIGHT_BYTES, f"more than {self.max_bytes} bytes in flight", RETRY_S
            )
        self.bytes[ticket.tenant] += more
        ticket.held += more
