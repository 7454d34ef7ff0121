"""Which network addresses a recipient's HTTPS channel may reach: public unicast only.

A tenant names its recipient's URL, so without a policy Custody's workers
would POST wherever a tenant points them: the cloud metadata service, the
Temporal frontend, a private search cluster. :func:`vet_ip` allows only
public unicast addresses and names the rule an address broke. The traps it
covers (``ipaddress`` on 3.11-3.13): CGNAT (100.64/10) is neither private nor
global, multicast counts as global, an IPv4-mapped loopback is not
``is_loopback`` before 3.13, and a 6to4 or Teredo address embeds an IPv4
address that must be vetted itself.

Loopback is its own answer (``"loopback"``): development delivers to the
tests' local servers, production refuses it (``activities.egress.reach``).

Names are resolved once (:func:`resolve`), every address the resolver
returned is vetted, and the connection goes to a vetted address, never to the
name again: a second lookup could answer otherwise (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

#: ``(host, port) -> addresses``: the system resolver, or a test's stand-in.
Resolver = Callable[[str, int], list[str]]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_RULES = ("is_unspecified", "is_link_local", "is_multicast", "is_private", "is_reserved")


def literal(host: str) -> IPAddress | None:
    """``host`` as an address if it is one (an IPv6 zone id dropped), else None."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def vet_ip(address: IPAddress) -> str | None:
    """None for a public unicast address; else why not (``loopback`` for loopback)."""
    inner = _embedded(address)
    if inner.is_loopback:
        return "loopback"
    for rule in _RULES:
        if getattr(inner, rule):
            return rule.removeprefix("is_")
    if not inner.is_global:  # 100.64/10 CGNAT, 192.0.0/24, benchmarking ...
        return "not global"
    return None


def _embedded(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv4-mapped, 6to4 or Teredo address carries, else itself."""
    if isinstance(address, ipaddress.IPv6Address):
        teredo = address.teredo
        found = address.ipv4_mapped or address.sixtofour or (teredo[1] if teredo else None)
        if found is not None:
            return found
    return address


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``getaddrinfo`` gives ``host`` for TCP (it also reads ``0x7f.1``)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve(host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    """``host`` itself if it is an address, else what ``resolver`` answers for it.

    ``OSError`` when it answers nothing; an unparsable answer counts as none.
    """
    found = literal(host)
    if found is not None:
        return [found]
    addresses = [a for a in (literal(text) for text in resolver(host, port)) if a is not None]
    if not addresses:
        raise OSError(f"no address for the recipient's host ({len(host)} characters)")
    return addresses
