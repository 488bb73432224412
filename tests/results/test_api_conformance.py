"""schemathesis' conformance checks on the public API (results and registry): every answer, to
generated requests and to requests for real published objects, has a documented status, a
documented content type and a body that matches the documented schema; none is a server error.

Driven through hypothesis directly, as tests/security/test_api_fuzz.py does; the examples per
operation are few (SCHEMATHESIS_EXAMPLES, default 8) and the real objects are asked for once.
"""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from evaluations.models import Conversation
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="checks every results API answer against its schema"),
]

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "8"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
PUBLIC_PREFIXES = (
    "/api/areas",
    "/api/runs",
    "/api/conversations",
    "/api/scenarios",
    "/api/explore",
    "/api/metrics",
    "/api/labels",
    "/api/releases",
    "/api/anchor-study",
)


def _operations():
    from django.core.wsgi import get_wsgi_application

    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    operations = [result.ok() for result in schema.get_all_operations()]
    return {
        op.path: op
        for op in operations
        if op.method.upper() == "GET" and op.path.startswith(PUBLIC_PREFIXES)
    }


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


def _real_parameters(run) -> dict[str, list[dict]]:
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    target = run.targets.order_by("name").first()
    key = conversation.scenario.metric_version.metric.key
    return {
        "/api/runs/{id}/": [{"id": run.pk}],
        "/api/runs/{id}/results/": [{"id": run.pk}],
        "/api/runs/{id}/reasks/": [{"id": run.pk}],
        "/api/runs/{id}/conversations/": [{"id": run.pk}],
        "/api/runs/{id}/results.{fmt}": [{"id": run.pk, "fmt": "csv"}],
        "/api/conversations/{id}/": [{"id": conversation.pk}],
        "/api/scenarios/{id}/": [{"id": conversation.scenario_id}],
        "/api/metrics/{key}/results/": [{"key": key}],
        "/api/metrics/{key}/": [{"key": key}],
        "/api/labels/{id}/": [{"id": target.pk}],
        "/api/releases/{version}/": [{"version": run.release.version}],
        "/api/releases/{version}/expert-figures/": [{"version": run.release.version}],
    }


def test_results_api_conforms_to_its_schema(keep_test_connection):
    run = published_run()
    operations = _operations()
    assert len(operations) >= 15, sorted(operations)
    failures: list[str] = []

    def validate(case) -> None:
        try:
            case.call_and_validate(checks=CHECKS)
        except Exception as error:  # noqa: BLE001 - every failure is collected and reported
            failures.append(f"{case.operation.path} {case.path_parameters} {case.query}: {error}")

    for path, parameters in _real_parameters(run).items():
        for values in parameters:
            validate(operations[path].Case(path_parameters=values))
    assert not failures, "\n\n".join(failures)
    for operation in operations.values():

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def generated(case):
            case.call_and_validate(checks=CHECKS)

        generated()
