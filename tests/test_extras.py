"""What each install path can import: runtime code needs only the runtime dependencies.

The packages are read with ``ast``. Every third-party import is mapped to the
distribution that provides it (``packages_distributions`` of this environment,
which holds every extra) and must be in the lock's closure for where it sits:
``[project.dependencies]`` for runtime code; that plus ``[bench]`` under
``starter/bench``, plus ``[chaos]`` under ``starter/chaos``; plus extra X inside
``with needs("X", ...)``, which turns a missing module into EXTRA_MISSING.
Imports under ``if TYPE_CHECKING:`` are types only and are not counted.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import shlex
import sys
from functools import cache
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from custody import extras
from custody.errors import Code, ConfigurationError
from tests.lockfile import ROOT, closure, pyproject

PACKAGES = ("custody", "workflows", "activities", "workers", "starter")
#: Folders whose code runs only with an extra installed, and that extra.
ZONES = {"starter/bench": "bench", "starter/chaos": "chaos"}
FIRST_PARTY = {*PACKAGES, "tests"}

Found = list[tuple[str, str, frozenset[str]]]  # (where, module, extras in force)


class _Imports(ast.NodeVisitor):
    """Third-party top-level imports, each with the extras in force where it is made."""

    def __init__(self, where: str, zone: frozenset[str]) -> None:
        self.where, self.extras = where, [zone]
        self.found: Found = []

    def visit_If(self, node: ast.If) -> None:
        if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        named = {_needs_extra(item.context_expr) for item in node.items} - {None}
        self.extras.append(self.extras[-1] | frozenset(n for n in named if n))
        self.generic_visit(node)
        self.extras.pop()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0 and node.module:
            self._add(node.module, node.lineno)

    def _add(self, module: str, line: int) -> None:
        top = module.split(".")[0]
        if top not in FIRST_PARTY and top not in sys.stdlib_module_names:
            self.found.append((f"{self.where}:{line}", top, self.extras[-1]))


def _needs_extra(expr: ast.expr) -> str | None:
    """``X`` for ``needs("X", ...)``, else None."""
    if isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "needs" and expr.args:
        first = expr.args[0]
        return first.value if isinstance(first, ast.Constant) else None
    return None


def _third_party_imports() -> Found:
    found: Found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            zone = frozenset(e for folder, e in ZONES.items() if where.startswith(folder + "/"))
            visitor = _Imports(where, zone)
            visitor.visit(ast.parse(path.read_text(), where))
            found += visitor.found
    return found


@cache
def _installed() -> dict[str, set[str]]:
    """Top-level module -> the distributions (canonical names) that install it here."""
    return {
        module: {canonicalize_name(name) for name in names}
        for module, names in md.packages_distributions().items()
    }


def _providers(module: str) -> set[str]:
    return _installed().get(module, set())


@cache
def _closure(extra: str) -> frozenset[str]:
    return frozenset(closure(extra))


def test_extras_runtime_code_imports_only_what_its_install_path_holds() -> None:
    """Every third-party import is satisfied by the runtime closure, plus the extras in force."""
    runtime = set(closure())
    unmet = []
    for where, module, in_force in _third_party_imports():
        allowed = runtime.union(*(_closure(e) for e in in_force))
        if not _providers(module) & allowed:
            unmet.append(f"{where} {module} (extras in force: {sorted(in_force) or 'none'})")
    assert unmet == []


def test_extras_each_module_comes_with_its_extra_and_not_without() -> None:
    """EXTRAS names modules its extra installs and the runtime closure does not."""
    declared = set(pyproject()["project"]["optional-dependencies"]) - {"test", "gpu"}
    assert set(extras.EXTRAS) == declared
    runtime = set(closure())
    for extra, modules in extras.EXTRAS.items():
        for module in modules:
            providers = _providers(module)
            assert providers & _closure(extra), (extra, module)
            assert not providers & runtime, (extra, module)


def test_extras_needs_turns_the_extras_missing_module_into_its_install_line() -> None:
    """A ModuleNotFoundError for torch (raised by hand here: torch is installed): EXTRA_MISSING."""
    with pytest.raises(ConfigurationError) as caught, extras.needs("easyocr", "the engine"):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    err = caught.value
    assert err.code is Code.EXTRA_MISSING
    assert err.detail.startswith("the engine needs custody[easyocr] (torch is not installed): ")
    assert err.detail.endswith(extras.install_hint("easyocr")) and "\n" not in err.detail


def test_extras_needs_lets_other_import_errors_through() -> None:
    """A module no extra provides is not explained away as one."""
    with pytest.raises(ModuleNotFoundError), extras.needs("bench", "custody bench"):
        import custody_no_such_module  # type: ignore[import-not-found]  # noqa: F401


def test_extras_require_passes_where_the_extra_is_installed() -> None:
    """This environment has the test path's extras (make test): require finds them all."""
    for extra in ("bench", "easyocr"):
        extras.require(extra, f"custody {extra}")


def test_extras_install_hint_is_this_interpreters_pip() -> None:
    """The hint runs this very interpreter's pip on custody with the extra."""
    hint = extras.install_hint("bench")
    assert hint.startswith(f"{shlex.quote(sys.executable)} -m pip install ")
    assert hint.endswith("[bench]'") and Path(sys.executable).exists()
