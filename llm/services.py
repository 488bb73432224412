"""Writes: saving configurations together with the roles they fill; testing an endpoint;
the inactive configurations of synthetic load-test data."""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from pydantic import BaseModel, Field

from .exceptions import LLMError, StructuredOutputError
from .gateway import structured
from .models import LLMCall, ModelConfiguration, ModelRole, ModelRoleAssignment, Provider


@transaction.atomic
def configuration_save(
    *,
    configuration: ModelConfiguration,
    roles: Iterable[str],
    default_roles: Iterable[str] = (),
) -> ModelConfiguration:
    """Save `configuration` and make its role assignments exactly `roles`.

    For each role in `default_roles` it becomes the default, taking over from the previous
    default (one default per role is a database constraint).
    """
    roles = set(roles) | set(default_roles)
    unknown = roles - set(ModelRole.values)
    if unknown:
        raise ValueError(f"Unknown model roles: {', '.join(sorted(unknown))}")
    configuration.full_clean()
    configuration.save()

    configuration.role_assignments.exclude(role__in=roles).delete()
    default_roles = set(default_roles)
    # Clear the previous defaults first so the one-default constraint never sees two.
    ModelRoleAssignment.objects.filter(role__in=default_roles, is_default=True).exclude(
        configuration=configuration
    ).update(is_default=False)
    for role in roles:
        ModelRoleAssignment.objects.update_or_create(
            role=role,
            configuration=configuration,
            defaults={"is_default": role in default_roles},
        )
    return configuration


def configuration_synthetic_get_or_create(*, name: str, model_id: str) -> ModelConfiguration:
    """The switched-off configuration that synthetic load-test results are filed under."""
    configuration, _ = ModelConfiguration.objects.get_or_create(
        name=name,
        defaults={
            "provider": Provider.OPENAI_COMPATIBLE,
            "model_id": model_id,
            "is_active": False,
            "api_key_env": "",
            "description": "Synthetic configuration for load tests; never called.",
            "synthetic": True,
        },
    )
    return configuration


class EndpointCheck(BaseModel):
    """The one small structured reply "Test this endpoint" asks for."""

    ok: bool = Field(description="Always true.")
    word: str = Field(min_length=1, max_length=40, description="The word you were given.")


@dataclass(frozen=True)
class EndpointTestResult:
    ok: bool
    summary: str
    raw_reply: str
    error: str
    structured_output: str
    calls: list = field(default_factory=list)


def configuration_test(*, configuration: ModelConfiguration) -> EndpointTestResult:
    """One small structured call, uncached, recorded like any other: what came back and what
    failed (HTTP, JSON, schema or the token limit), for the configuration's page."""
    mode = configuration.get_structured_output_display()
    messages = [{"role": "user", "content": 'Reply with ok true and the word "harbour".'}]
    try:
        result = structured(
            configuration=configuration,
            messages=messages,
            schema=EndpointCheck,
            role=ModelRole.JUDGE,
            purpose="llm.endpoint_test",
            use_cache=False,
        )
    except StructuredOutputError as error:
        calls = list(LLMCall.objects.filter(pk__in=error.call_ids).order_by("attempt"))
        return EndpointTestResult(
            False,
            "The endpoint answered, but not with the JSON asked for.",
            error.raw_text,
            error.message,
            mode,
            calls,
        )
    except LLMError as error:
        calls = list(LLMCall.objects.filter(pk__in=error.call_ids).order_by("attempt"))
        return EndpointTestResult(False, "The call failed.", "", error.message, mode, calls)
    calls = list(LLMCall.objects.filter(pk__in=result.call_ids).order_by("attempt"))
    return EndpointTestResult(
        True,
        f"Structured output works ({len(calls)} attempt{'s' if len(calls) != 1 else ''}, "
        f"{result.latency_ms} ms).",
        result.text,
        "",
        mode,
        calls,
    )
