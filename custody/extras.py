"""Custody's optional parts (pip extras), and the one line a command answers when one is missing.

``pip install .`` gives the CLI, the SDK and both workers with the default engine;
heavier parts sit behind extras in ``pyproject.toml``, as httpx keeps its CLI and
HTTP/2 behind ``httpx[cli]`` and ``httpx[http2]``. A command that needs one checks
for it first (:func:`require`) or imports it inside :func:`needs`, so a missing
extra is :class:`~custody.errors.ConfigurationError` with code ``EXTRA_MISSING``
(the CLI's exit 9) and the install command that fixes it, never an ImportError's
traceback. ``tests/test_extras.py`` checks :data:`EXTRAS` against pyproject.

Only the standard library here: any process, the workflow sandbox included, may import it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import unquote, urlparse

from custody.errors import Code, ConfigurationError

__all__ = ["EXTRAS", "install_hint", "missing", "needs", "require"]

#: extra -> the top-level modules Custody imports from it (not their dependencies).
EXTRAS: dict[str, tuple[str, ...]] = {
    "easyocr": ("torch", "torchvision", "easyocr", "easyocr_en_models"),
    "bench": ("matplotlib", "httpx"),
    "chaos": ("moto", "werkzeug"),
}


def require(extra: str, feature: str) -> None:
    """Fail now, with the install hint, unless every module of ``extra`` can be imported.

    ``find_spec`` looks a module up without importing it, so the check costs no
    torch import; ``feature`` names what needs the extra, in the user's words.
    """
    absent = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if absent:
        raise missing(extra, feature, absent[0])


@contextmanager
def needs(extra: str, feature: str) -> Iterator[None]:
    """Imports made inside become ``EXTRA_MISSING`` when a module of ``extra`` is absent.

    Any other ImportError passes unchanged: a broken install of something else is
    not this extra's to explain.
    """
    try:
        yield
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in EXTRAS[extra]:
            raise
        raise missing(extra, feature, err.name or "") from None


def missing(extra: str, feature: str, module: str) -> ConfigurationError:
    """The error for ``feature`` without ``extra``: one line, the install command in it."""
    return ConfigurationError(
        Code.EXTRA_MISSING,
        f"{feature} needs custody[{extra}] ({module} is not installed): {install_hint(extra)}",
    )


def install_hint(extra: str) -> str:
    """A command that installs ``extra`` here, literally: this interpreter's pip, and the
    checkout Custody was installed from when it came from one (PEP 610 ``direct_url.json``)."""
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    source = _installed_from()
    if source is None:
        return f"{pip} {shlex.quote(f'custody[{extra}]')}"
    folder, editable = source
    return f"{pip} {'-e ' if editable else ''}{shlex.quote(f'{folder}[{extra}]')}"


def _installed_from() -> tuple[str, bool] | None:
    """The local folder this distribution was installed from, and whether editable."""
    try:
        text = importlib.metadata.distribution("custody").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    record = json.loads(text)
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file":
        return None
    return unquote(url.path), bool(record.get("dir_info", {}).get("editable"))
