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

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="fuzzes every API operation from its schema"),
]

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


def test_no_api_parameter_answers_a_server_error_to_unicode_digits_or_categories(client):
    """schemathesis draws ASCII integers; here every parameter of the schema gets the digits
    str.isdigit() accepts but int() does not, other scripts' digits and one character of every
    Unicode category (generated in tests/security/test_identifiers.py), with the path ids of
    real published objects so the parameter is read."""
    from tests.results.public_data import published_run
    from tests.security.test_identifiers import BAD_IDS, NUMERIC_LOOKALIKES

    run = published_run()
    conversation = run.conversations.first()
    ids = {
        "/api/runs/": run.pk,
        "/api/labels/": run.targets.first().pk,
        "/api/conversations/": conversation.pk,
        "/api/scenarios/": conversation.scenario_id,
        "/api/submissions/": 1,
    }
    schema = client.get("/api/schema/", {"format": "json"}).json()
    values = [*BAD_IDS, *NUMERIC_LOOKALIKES[::50]]
    wrong = []
    for path, operations in schema["paths"].items():
        parameters = operations.get("get", {}).get("parameters", [])
        prefix = next((p for p in ids if path.startswith(p)), None)
        url = path.replace("{id}", str(ids.get(prefix, 1))).replace("{fmt}", "csv")
        url = url.replace("{key}", conversation.scenario.metric_version.metric.key)
        url = url.replace("{version}", run.release.version)
        for parameter in (p for p in parameters if p["in"] == "query"):
            for value in values:
                response = client.get(url, {parameter["name"]: value})
                if response.status_code >= 500 or "json" not in response["Content-Type"]:
                    wrong.append((url, parameter["name"], value, response.status_code))
        if any(p["in"] == "path" and p["name"] == "id" for p in parameters):
            for value in values[:20]:
                response = client.get(path.replace("{id}", value).replace("{fmt}", "csv"))
                if response.status_code >= 500:
                    wrong.append((path, "id", value, response.status_code))
    assert wrong == []
