"""Security tests reuse the registry's small catalog."""

from tests.metrics_registry.conftest import catalog  # noqa: F401
