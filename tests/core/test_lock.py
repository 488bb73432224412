"""Lock files: every dependency of pyproject.toml pinned with hashes, and installed as locked."""

import re
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def locked(name: str) -> dict[str, str]:
    pins = {}
    text = (ROOT / name).read_text()
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = PIN.match(block)
        if match:
            assert "--hash=sha256:" in block, f"{match.group(1)} in {name} has no hash"
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def declared() -> tuple[list[Requirement], list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = [Requirement(r) for r in project["dependencies"]]
    dev = [Requirement(r) for r in project["optional-dependencies"]["dev"]]
    return runtime, dev


@pytest.mark.parametrize(
    ("lock", "groups"),
    [("requirements.lock", ("runtime",)), ("requirements-dev.lock", ("runtime", "dev"))],
)
def test_every_declared_dependency_is_pinned_within_its_range(lock, groups):
    runtime, dev = declared()
    pins = locked(lock)
    wanted = [*runtime, *(dev if "dev" in groups else [])]
    missing = [str(r) for r in wanted if canonicalize_name(r.name) not in pins]
    assert not missing, f"Run `make lock`: {missing} are not in {lock}"
    outside = [
        f"{r} (locked {pins[canonicalize_name(r.name)]})"
        for r in wanted
        if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)
    ]
    assert not outside, f"Run `make lock`: {outside}"


def test_the_environment_is_what_the_dev_lock_says():
    differing = []
    for name, version in locked("requirements-dev.lock").items():
        if name in {"pip", "setuptools", "wheel"}:
            continue  # the virtualenv's own tools
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            differing.append(f"{name}: locked {version}, installed {installed}")
    assert not differing, "Run `make` to install the lock: " + "; ".join(differing)
