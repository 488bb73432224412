"""Worker, fault and browser tests share one process when the suite runs in several."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

SAMPLE = '''
import os, time
import pytest

def record(name):
    time.sleep(0.2)
    with open(os.path.join(os.environ["RECORD_DIR"], name), "w") as handle:
        handle.write(os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("n", range(6))
@pytest.mark.{marker}
def test_serial(n):
    record(f"serial-{{n}}")

@pytest.mark.parametrize("n", range(6))
def test_free(n):
    record(f"free-{{n}}")
'''


@pytest.mark.slow(reason="starts pytest with two pytest-xdist workers")
@pytest.mark.parametrize("marker", ["worker", "faults", "browser"])
def test_marked_tests_run_in_one_process_and_the_rest_in_both(tmp_path, marker):
    (tmp_path / "test_sample.py").write_text(SAMPLE.format(marker=marker))
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    worker: w\n    faults: f\n    browser: b\n"
    )
    records = tmp_path / "records"
    records.mkdir()
    result = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.lanes", "-p", "no:cacheprovider"]
        + ["-p", "no:django", "-n", "2", "--dist", "loadgroup", str(tmp_path)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "RECORD_DIR": str(records)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    seen = {path.name: path.read_text() for path in records.iterdir()}
    (serial,) = {seen[f"serial-{n}"] for n in range(6)}
    # The other process was not idle meanwhile: it took unmarked tests.
    assert any(seen[f"free-{n}"] != serial for n in range(6)), seen
