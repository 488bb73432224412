"""The per-test time budget (tests/budget.py) in a pytest run of its own: a test over three
budgets without a slow marker fails a run whose tests all passed, and the run says which test at
its very end; a marked test, or one between one and three budgets, does not fail it."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent

pytest_plugins = ["pytester"]

SLEEPERS = """
import time
import pytest

def test_quick():
    pass

def test_over_three_budgets():
    time.sleep(0.5)

@pytest.mark.slow(reason="sleeps on purpose")
def test_marked():
    time.sleep(0.5)
"""


@pytest.fixture
def budgeted(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("TEST_BUDGET_SECONDS", "0.1")
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY))  # for -p tests.budget
    # The installed plugins (Django, Playwright, Hypothesis…) cost seconds to load, none is used.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeini(
        "[pytest]\n"
        "markers =\n    slow(reason): over the budget\n"
        "addopts = -p tests.budget -p no:cacheprovider\n"
    )
    return pytester


def test_a_test_over_three_budgets_fails_the_run_and_is_named_last(budgeted):
    budgeted.makepyfile(test_sleepers=SLEEPERS)
    result = budgeted.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "3 passed" in result.stdout.str()
    tail = [line for line in result.stdout.lines if line.strip()][-2:]
    assert tail[0].startswith("The run fails on the time budget: 1 test(s) over 0.3 s")
    assert tail[1].endswith("test_sleepers.py::test_over_three_budgets")
    assert not any("test_marked" in line for line in result.stdout.lines)


def test_a_test_under_three_budgets_is_listed_and_a_marked_one_not_and_the_run_passes(budgeted):
    # Between one and three budgets: listed as a warning, the run still passes.
    budgeted.makepyfile(test_sleepers=SLEEPERS.replace("sleep(0.5)\n\n@", "sleep(0.15)\n\n@"))
    result = budgeted.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.OK
    assert "time budget" not in result.stdout.str()
    listed = result.stdout.str().split("over the 0.1 s budget without a slow marker")[1]
    assert "test_sleepers.py::test_over_three_budgets" in listed
    assert "test_marked" not in listed


def test_time_spent_waiting_for_a_cpu_held_by_others_does_not_fail_the_run(budgeted):
    # As if other processes held the CPUs for nine tenths of every test's wall time.
    budgeted.makeconftest(
        "import time\nimport tests.budget as budget\n\n"
        "budget.cpu_wait_seconds = lambda: time.perf_counter() * 0.9\n"
    )
    budgeted.makepyfile(test_sleepers=SLEEPERS)
    result = budgeted.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.OK
    assert "time budget" not in result.stdout.str()
    listed = [line for line in result.stdout.lines if "test_over_three_budgets" in line]
    assert len(listed) == 1
    assert re.search(r"\(0\.4\d s of it waiting for a CPU\)$", listed[0])


def test_this_machine_reports_the_wait_the_budget_subtracts():
    """With twice as many busy processes as CPUs, a busy test waits for one a good share of the
    time, and the kernel says so."""
    from tests import budget

    if not budget.SCHEDSTAT.exists():
        pytest.skip("this kernel keeps no scheduler statistics: wall time is counted whole")
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])  # noqa: S603
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    try:
        time.sleep(0.2)  # the hogs running
        before, started = budget.cpu_wait_seconds(), time.perf_counter()
        while time.perf_counter() - started < 0.8:
            pass
        waited = budget.cpu_wait_seconds() - before
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert 0.1 < waited < 1.5
