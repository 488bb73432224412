"""The installer is pinned like every other dependency: a new venv gets pip, setuptools and wheel
at their locked versions, by hash, before any other lock is read with it."""

import re
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)")
HASH = re.compile(r"--hash=(sha256:[0-9a-f]{64})")


def read_lock(path: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """Each pinned package of a pip-compile lock: its version and the hashes it accepts."""
    pins: dict[str, tuple[str, frozenset[str]]] = {}
    name = pinned = None
    hashes: set[str] = set()
    for line in path.read_text().splitlines():
        if match := REQUIREMENT.match(line):
            if name:
                pins[name] = (pinned, frozenset(hashes))
            name, pinned, hashes = match[1].lower(), match[2], set()
        hashes.update(HASH.findall(line))
    if name:
        pins[name] = (pinned, frozenset(hashes))
    return pins


def test_the_bootstrap_lock_pins_the_installer_by_hash_as_the_dev_lock_does():
    bootstrap = read_lock(ROOT / "requirements-bootstrap.lock")
    dev = read_lock(ROOT / "requirements-dev.lock")
    assert {"pip", "setuptools", "wheel"} <= bootstrap.keys()
    for name, (pinned, hashes) in bootstrap.items():
        assert hashes, f"{name} has no hash in the bootstrap lock"
        assert dev[name] == (pinned, hashes), f"{name}: the two locks disagree"


def test_this_venv_runs_the_installer_the_bootstrap_lock_pins():
    # A venv made by the interpreter starts with its bundled pip (23.2.1 on Python 3.11.7); CI
    # installs into a fresh one, so a Makefile that skipped the bootstrap fails here.
    for name, (pinned, _) in read_lock(ROOT / "requirements-bootstrap.lock").items():
        assert version(name) == pinned, f"{name} {version(name)} is not the locked {pinned}"


def test_the_image_installs_the_installer_before_its_lock():
    steps = [
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if "pip install" in line
    ]
    assert "requirements-bootstrap.lock" in steps[0]
    assert "--require-hashes" in steps[0]
    assert any("requirements.lock" in step for step in steps[1:])
