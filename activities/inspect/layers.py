"""Which sandbox layers a child gets on this platform, and production's refusal to run
without one that nothing else covers (``activities.inspect.lockdown.missing_in_production``).

Both workers call :func:`check_sandbox` before they poll: in production a
missing layer stops the worker with ``SANDBOX_DEGRADED`` (exit status 9 from
the CLI's own checks), rather than leaving a ``sandbox_degraded`` warning in a
log nobody reads. Every child checks again for itself before it decodes a
byte (``activities.inspect.zygote``), so a document is never decoded in a
weaker sandbox than the one checked here.
"""

from __future__ import annotations

from activities.inspect import untrusted
from activities.inspect.inspection import ChildOrder
from activities.inspect.lockdown import missing_in_production
from custody.errors import Code, ConfigurationError
from custody.settings import Limits

_TIMEOUT_S = 30.0


def check_sandbox(
    production: bool, zygote: untrusted._Zygote | None = None, skip: tuple[str, ...] = ()
) -> list[str]:
    """The layers this platform refused a child locked down as for a document; in
    production, ``SANDBOX_DEGRADED`` if one of them is not covered by another.

    ``skip`` is honoured by a probe zygote only (a test's), never the worker's own.
    """
    zygote = zygote or untrusted._ZYGOTE
    order = ChildOrder.model_validate({"kind": "lockdown", "limits": Limits(), "probe_skip": skip})
    child = zygote.fork(b"")
    out: bytes | None = None
    try:
        out = child.verdict(order.model_dump_json().encode(), _TIMEOUT_S)
        status = child.status() if out is not None else None
    finally:
        if out is None:
            zygote.kill(child.pid)
        child.close()
    if out is None or status is None:
        raise ConfigurationError(Code.SANDBOX_DEGRADED, "the sandbox check did not answer")
    found = untrusted._reply(out).get("degraded")
    degraded = [str(code) for code in found] if isinstance(found, list) else []
    missing = missing_in_production(degraded)
    if production and missing:
        raise ConfigurationError(Code.SANDBOX_DEGRADED, f"layers missing: {','.join(missing)}")
    return degraded
