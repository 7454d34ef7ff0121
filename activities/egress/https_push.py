"""HTTPS push: one POST per packet and attempt, kept once by its idempotency key.

Wire format (``custody-packet/1``)::

    POST <url>
    Content-Type: application/zip
    Idempotency-Key: <release_id>
    Custody-Release-Id: <release_id>
    Custody-Packet-Sha256: <hex SHA-256 of manifest.json>
    Content-Digest: sha-256=:<base64 SHA-256 of the body>:      (RFC 9530)

    <ZIP, entries stored uncompressed: the files in name order, then manifest.json;
     every entry dated 1980-01-01, mode 0644, so one packet is always one byte string>

How the recipient's answer is read:

* 2xx: accepted. ``answer_sha256`` is the SHA-256 of the answer body (its
  first MiB; the rest is not read).
* 409 whose ``Custody-Packet-Sha256`` equals ours: it already holds this
  packet. Success, ``already_delivered=True``.
* 409 naming another hash: it holds a different packet under this release,
  ``DELIVERY_CONFLICT``, not retryable.
* 409 without that header (a request with this key still in flight), 408, 429,
  5xx, refused connections, resets and timeouts (the request's own, never past
  the attempt's deadline): ``RECIPIENT_UNREACHABLE``, a retryable code. The
  deliver step's retry policy sends the POST again later
  (``workflows.retries.deliver``); the same key keeps that safe.
* Anything else (redirects are not followed, other 4xx): ``RECIPIENT_REFUSED``,
  not retryable. So is a TLS certificate that does not verify: trust is
  configuration (``ca_file``), not luck.

Where it connects: the name is resolved once per attempt and every address
vetted (``activities.egress.reach``: public unicast only; loopback in
development), then the connection goes to the first vetted address with SNI
and the certificate checked for the name, never to the name again (a second
lookup is how DNS rebinding gets in).

How long: the whole attempt, connect to the answer's last byte, ends at
``AttemptLimits.deadline_s``, whatever each socket operation's timeout: at
the deadline the socket is shut down under the request, so a recipient that
trickles bytes cannot hold an I/O thread past it (``RECIPIENT_UNREACHABLE``).

The client is stdlib ``http.client``: no proxy from the environment, the
default TLS context plus an optional CA file for a private CA.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import io
import re
import socket
import ssl
import threading
import time
import zipfile
from urllib.parse import urlsplit

from activities.egress.addresses import IPAddress
from activities.egress.channels import AttemptLimits, Delivery, Packet, RecipientChannel
from activities.egress.reach import Reach
from custody.errors import Code, DeliveryFailed

ANSWER_CAP = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def packet_zip(packet: Packet) -> bytes:
    """The packet as a deterministic ZIP: no timestamps or host details inside."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as archive:
        for name, data in packet.entries():
            info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            info.create_system = 3  # unix, whatever the sending host
            info.external_attr = 0o100644 << 16
            archive.writestr(info, data)
    return buf.getvalue()


def packet_headers(packet: Packet, body: bytes) -> dict[str, str]:
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    return {
        "Content-Type": "application/zip",
        "Idempotency-Key": packet.release_id,
        "Custody-Release-Id": packet.release_id,
        "Custody-Packet-Sha256": packet.sha256,
        "Content-Digest": f"sha-256=:{digest}:",
        "User-Agent": "custody-egress/1",
    }


class HttpsChannel:
    """Pushes packets to one URL: one POST per ``deliver`` call, within ``limits``."""

    kind = "https"

    def __init__(
        self,
        spec: RecipientChannel,
        *,
        ca_file: str | None = None,
        limits: AttemptLimits | None = None,
        reach: Reach | None = None,
    ) -> None:
        self.spec, self.limits, self.reach = spec, limits or AttemptLimits(), reach or Reach()
        self._url = http_target(spec)
        https = spec.target.startswith("https://")
        self._tls = ssl.create_default_context(cafile=ca_file) if https else None

    def deliver(self, packet: Packet) -> Delivery:
        """POST once: accepted (or already held), or the code the answer means."""
        deadline = _Deadline(self.limits.deadline_s)
        address = self.reach.addresses(self.spec)[0]  # resolved once, every address vetted
        body = packet_zip(packet)
        status, answer, held = self._post(address, body, packet_headers(packet, body), deadline)
        answer_sha256 = hashlib.sha256(answer).hexdigest()
        if 200 <= status < 300 or (status == 409 and held == packet.sha256):
            return Delivery(
                channel="https",
                location=self.spec.location,
                release_id=packet.release_id,
                packet_sha256=packet.sha256,
                answer_sha256=answer_sha256,
                already_delivered=status == 409,
                status=status,
                body_sha256=hashlib.sha256(body).hexdigest(),
            )
        raise _judge(packet.release_id, status, answer_sha256, held)

    def _post(
        self, address: IPAddress, body: bytes, headers: dict[str, str], deadline: _Deadline
    ) -> tuple[int, bytes, str | None]:
        host, port, path = self._url
        timeout = min(self.limits.request_timeout_s, deadline.left())
        conn = _Pinned(host, port, address, timeout, deadline, self._tls)
        try:
            conn.request("POST", path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read(ANSWER_CAP), resp.getheader("Custody-Packet-Sha256")
        except ssl.SSLCertVerificationError as exc:
            detail = "TLS certificate not trusted"
            raise DeliveryFailed(Code.RECIPIENT_REFUSED, detail) from exc
        except (OSError, http.client.HTTPException) as exc:
            detail = "deadline passed" if deadline.cut else type(exc).__name__
            raise DeliveryFailed(Code.RECIPIENT_UNREACHABLE, detail) from exc
        finally:
            deadline.close()
            conn.close()


class _Deadline:
    """The attempt's wall clock: at its end the connection's socket is shut down, which
    ends any send or receive blocked on it, however patient each one's own timeout."""

    def __init__(self, seconds: float) -> None:
        self.end, self.cut = time.monotonic() + seconds, False
        self._timer: threading.Timer | None = None

    def left(self) -> float:
        return max(0.001, self.end - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        self._timer = threading.Timer(self.left(), self._shut, (sock,))
        self._timer.daemon = True
        self._timer.start()

    def _shut(self, sock: socket.socket) -> None:
        self.cut = True
        with contextlib.suppress(OSError):  # already closed: the attempt is over anyway
            sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


class _Pinned(http.client.HTTPSConnection):
    """A connection to one vetted address: the name only in ``Host``, SNI and the
    certificate check; plain HTTP when there is no TLS context (development)."""

    def __init__(
        self,
        host: str,
        port: int,
        address: IPAddress,
        timeout: float,
        deadline: _Deadline,
        tls: ssl.SSLContext | None,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=tls)
        self._address, self._deadline, self._tls = str(address), deadline, tls
        self.default_port = 80 if tls is None else 443  # Host carries the port unless default

    def connect(self) -> None:
        # Replaces the name lookup of HTTP(S)Connection.connect: the vetted address only.
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self._deadline.watch(raw)
        tls = self._tls
        self.sock = raw if tls is None else tls.wrap_socket(raw, server_hostname=self.host)


def http_target(spec: RecipientChannel) -> tuple[str, int, str]:
    """Host, port and request path; the port is explicit so an IPv6 host is never misread."""
    url = urlsplit(spec.target)
    port = url.port or (443 if url.scheme == "https" else 80)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return str(url.hostname), port, path


def _judge(release_id: str, status: int, answer_sha256: str, held: str | None) -> DeliveryFailed:
    """The failure a non-accepting answer means; only its status and hashes are quoted."""
    if status == 409 and held:
        other = held if _HEX64.fullmatch(held) else "unreadable"
        detail = f"release {release_id}: recipient holds packet sha256 {other}"
        return DeliveryFailed(Code.DELIVERY_CONFLICT, detail)
    detail = f"release {release_id}: HTTP {status}, answer sha256 {answer_sha256}"
    if status in (408, 409, 429) or status >= 500:
        return DeliveryFailed(Code.RECIPIENT_UNREACHABLE, detail)
    return DeliveryFailed(Code.RECIPIENT_REFUSED, detail)
