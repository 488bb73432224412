"""schemathesis on the published OpenAPI schema: generated requests (including hostile strings
in paths and query parameters) never make the API answer with a server error.

The operations are driven through hypothesis directly (schemathesis' own pytest plugin does not
load under this pytest); SCHEMATHESIS_EXAMPLES sets the examples per operation (CI: 25).
"""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))


def _operations():
    from django.core.wsgi import get_wsgi_application

    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    return [result.ok() for result in schema.get_all_operations()]


@pytest.fixture
def keep_test_connection():
    """Like Django's test client: a finished request must not close the test's connection."""
    from django.core import signals
    from django.db import close_old_connections

    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


def test_no_api_operation_answers_with_a_server_error(catalog, keep_test_connection):
    operations = _operations()
    assert len(operations) >= 6  # metrics, releases, submissions: list and detail each
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case):
            case.call_and_validate(checks=[not_a_server_error])

        check()
