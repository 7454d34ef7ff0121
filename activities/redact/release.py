"""A release under a ``view: redacted`` policy: each document's redacted view in its packet.

The view is the one ``custody redact`` makes with the built-in ``default``
policy (made now if it does not exist yet, approved by the release's actor),
so what leaves has passed the leak check and is named by a signed view that
links to the evidence record. The PDF gets the release's C2PA manifest like
any released file; the text is the view's kept words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import cache

from activities.engines.selection import build_engine
from activities.heartbeat import heartbeating
from activities.redact.policy import DEFAULT_REDACTION
from activities.redact.service import Redactor
from activities.redact.view import RedactionView
from activities.scratch import StagingArea
from custody import egress as eg
from custody.settings import Settings
from custody.signing import Signer
from custody.stores import ObjectStore

Builder = tuple[str, str, Callable[[], bytes]]
#: Longest a view may take to make inside a release's render step (its timeout is 20 min).
_MAKE_DEADLINE_S = 15 * 60.0


def redacted_files(
    p: eg.Prepared,
    src: eg.SourceDoc,
    parts: tuple[ObjectStore, Signer, StagingArea, Settings],
    sign: Callable[[bytes, str], bytes],
) -> Iterator[Builder]:
    """(name, media type, build) for each file of ``src``'s redacted view the policy includes."""
    store, signer, area, settings = parts

    @cache
    def view() -> RedactionView:
        redactor = Redactor(store, signer, area, lambda: build_engine(settings), settings.limits)
        with _beating(_MAKE_DEADLINE_S):
            return redactor.redact(
                src.sha256, p.release.tenant, DEFAULT_REDACTION, p.release.actor
            ).view

    stem = f"document-{src.sha256[:16]}-redacted"
    if "searchable_pdf" in p.policy.include:
        yield (
            f"{stem}.pdf",
            "application/pdf",
            lambda: sign(store.get(view().pdf_key), "application/pdf"),
        )
    if "text" in p.policy.include:
        yield f"{stem}.txt", "text/plain", lambda: store.get(view().text_key)


def _beating(deadline_s: float) -> AbstractContextManager[None]:
    """Heartbeat while a view is made (OCR pages take longer than the release's heartbeat
    timeout), for at most ``deadline_s``: a hung engine still loses the attempt."""
    return heartbeating("redacting", deadline_s, "redact-heartbeat")
