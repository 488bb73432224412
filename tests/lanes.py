"""Which tests share a process when the suite runs in several (pytest-xdist, `--dist
loadgroup`): tests that start Celery workers, inject faults or drive the browser take both cores
for a while, and their timing checks were sized for that, so they run one after another in one
process while the other processes work through the rest of the suite."""

import pytest

SERIAL_MARKERS = ("worker", "faults", "browser")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist turns the groups into node id suffixes
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in SERIAL_MARKERS):
            item.add_marker(pytest.mark.xdist_group("serial"))
