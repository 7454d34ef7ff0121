"""The image's Dockerfile: non-root, a health check, and every package the project ships."""

from __future__ import annotations

import re
import tomllib

from tests.deploy.conftest import DEPLOY


def test_image_runs_as_the_manifests_user_and_ships_every_package() -> None:
    """USER is the uid the pods name; the packages pyproject lists are copied in and not ignored."""
    text = (DEPLOY / "Dockerfile").read_text()
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert re.search(r"^USER 10001:10001$", text, re.M)
    assert re.search(r"^HEALTHCHECK .*healthcheck\.py", text, re.M | re.S)
    assert len(re.findall(r"^FROM python:3\.11-slim-bookworm AS ", text, re.M)) == 2
    project = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]]
    for package in packages:
        assert f"COPY {package} ./{package}" in text, package
        assert f"!{package}/**" in ignore, package


def test_image_installs_only_from_the_hashed_lock() -> None:
    """Both images install requirements/{run,gpu}.txt with hashes, then Custody with no deps."""
    text = (DEPLOY / "Dockerfile").read_text()
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    assert "!requirements/*.txt" in ignore
    assert re.search(r"^ARG REQUIREMENTS=run$", text, re.M)
    installs = re.findall(r"pip install ([^\n\\&]*)", text)
    assert installs == [
        "--require-hashes --no-deps -r requirements/build.txt ",
        '--require-hashes --no-deps -r "requirements/${REQUIREMENTS}.txt"',
        "--no-deps --no-build-isolation . ",
    ], installs
    assert "index-url" not in text and "find-links" not in text
    for name in ("run", "gpu", "build"):
        assert (DEPLOY.parent / "requirements" / f"{name}.txt").is_file(), name
