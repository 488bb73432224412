"""Writes: saving configurations together with the roles they fill; testing an endpoint;
the inactive configurations of synthetic load-test data and of imported transcripts."""

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from pydantic import BaseModel, Field

from .attempts import Wait
from .connect import provider_facts
from .egress import configuration_check
from .exceptions import LLMError, StructuredOutputError
from .gateway import structured
from .lookup import HostLookup
from .models import LLMCall, ModelConfiguration, ModelRole, ModelRoleAssignment, Provider


@transaction.atomic
def configuration_save(
    *,
    configuration: ModelConfiguration,
    roles: Iterable[str],
    default_roles: Iterable[str] = (),
    looked_up: HostLookup | None = None,
) -> ModelConfiguration:
    """Save `configuration` and make its role assignments exactly `roles`.

    For each role in `default_roles` it becomes the default, taking over from the previous
    default (one default per role is a database constraint). `looked_up` is the lookup of the
    endpoint's host the caller's form already made, so one save resolves the name once.
    """
    roles = set(roles) | set(default_roles)
    unknown = roles - set(ModelRole.values)
    if unknown:
        raise ValueError(f"Unknown model roles: {', '.join(sorted(unknown))}")
    configuration.full_clean()
    # Every way of saving comes here (forms, configure_model): none saves an endpoint the
    # egress policy would refuse to call, nor a key bound to another host.
    configuration_check(configuration, looked_up=looked_up)
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


def configurations_publish(*, configuration_ids: Iterable[int], run_id: int) -> int:
    """Freeze the published names of these configurations (`ModelConfiguration.PUBLISHED_FIELDS`)
    as run `run_id` makes them public; one already frozen keeps its first run. Returns how many
    were newly frozen."""
    return ModelConfiguration.objects.filter(
        pk__in=set(configuration_ids), published_in_run__isnull=True
    ).update(published_in_run=run_id)


def configuration_synthetic_get_or_create(*, name: str, model_id: str) -> ModelConfiguration:
    """The switched-off configuration that synthetic load-test results are filed under."""
    configuration, _created = ModelConfiguration.objects.get_or_create(
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


def configuration_imported_get_or_create(*, model_name: str) -> ModelConfiguration:
    """The configuration that names the model of imported transcripts: switched off, of the
    provider that is never called (`Provider.IMPORTED`), one per model name."""
    model_name = model_name.strip()[:100]
    # A file exported from an imported run names the model as this configuration is named.
    named = ModelConfiguration.objects.filter(name=model_name, provider=Provider.IMPORTED).first()
    if named is not None:
        return named
    configuration, _created = ModelConfiguration.objects.get_or_create(
        name=f"{model_name} (imported)",
        defaults={
            "provider": Provider.IMPORTED,
            "model_id": model_name,
            "is_active": False,
            "api_key_env": "",
            "temperature": None,
            "max_tokens": None,
            "structured_output": "prompt",
            "description": "Names the model that answered imported transcripts; never called.",
        },
    )
    if not configuration.is_imported:
        # A configuration someone created under that name for real calls: never reuse it.
        raise LLMError(
            _(
                "A model configuration named %(configuration_name)r already "
                "exists for real calls; rename it or name the imported model "
                "differently."
            )
            % {"configuration_name": configuration.name}
        )
    return configuration


class EndpointCheck(BaseModel):
    """The one small structured reply "Test this endpoint" asks for."""

    ok: bool = Field(description="Always true.")
    word: str = Field(min_length=1, max_length=40, description="The word you were given.")


@dataclass(frozen=True)
class ModeFinding:
    mode: str
    works: bool
    detail: str


@dataclass(frozen=True)
class ProbeResult:
    """What probing found: the mode stored (None when the endpoint could not be asked) and,
    for each mode tried, whether it worked; `error` is what stopped the probe."""

    mode: str | None
    findings: list[ModeFinding]
    error: str = ""
    calls: list = field(default_factory=list)
    reply: str = ""  # the schema-valid reply of the mode that works
    latency_ms: int = 0

    @property
    def works(self) -> bool:
        return bool(self.findings) and self.findings[-1].works

    @property
    def summary(self) -> str:
        tried = "; ".join(f"{f.mode}: {f.detail}" for f in self.findings)
        if self.mode is None:
            return f"Could not ask the endpoint for structured output: {self.error}" + (
                f" (tried {tried})" if tried else ""
            )
        return f"Structured output: {self.mode} (tried {tried})."


def retry_line(wait: Wait) -> str:
    """A retry as a progress line: which attempt failed, why, and how long until the next."""
    return (
        f"attempt {wait.attempt} of {wait.attempts} failed ({wait.reason[:200]}); "
        f"retrying in {wait.seconds:.1f} s…"
    )


_PROBE_MESSAGES = [{"role": "user", "content": 'Reply with ok true and the word "harbour".'}]


def structured_mode_probe(
    *, configuration: ModelConfiguration, on_progress: Callable[[str], None] | None = None
) -> ProbeResult:
    """Ask the endpoint for one small structured reply in each mode its provider supports,
    strongest first, and store the first mode that gives a schema-valid reply (else the
    strongest the server accepted) with what was found. Saved configurations only.

    A refused connection, a wrong key or an unknown model stops the probe at once and changes
    nothing: `error` says which. `on_progress` hears each mode as it is tried and what it did,
    and each retry of a failed attempt (timeouts, 5xx, 429) before its wait.
    """
    say = on_progress or (lambda line: None)
    provider = provider_facts(configuration)
    if provider.is_offline:
        return ProbeResult(configuration.structured_output, [])
    findings: list[ModeFinding] = []
    accepted: list[str] = []
    calls: list = []
    chosen: str | None = None
    for mode in provider.structured_modes:
        trial = copy.copy(configuration)
        trial.structured_output = mode
        say(f"Trying structured output {mode}…")
        try:
            result = structured(
                configuration=trial,
                messages=_PROBE_MESSAGES,
                schema=EndpointCheck,
                role=ModelRole.JUDGE,
                purpose="llm.structured_probe",
                use_cache=False,
                reasks=0,
                negotiate=False,
                fail_fast=True,
                on_retry=lambda wait: say(f"  {retry_line(wait)}"),
            )
        except StructuredOutputError as error:
            calls += error.calls
            accepted.append(mode)
            findings.append(
                ModeFinding(
                    mode, False, f"accepted, reply not valid ({error.validation_error[:120]})"
                )
            )
            say(f"  {findings[-1].detail}")
            continue
        except LLMError as error:
            calls += error.calls
            failure = error.failure
            if failure is not None and failure.format_refused:
                findings.append(ModeFinding(mode, False, f"refused (HTTP {failure.status})"))
                say(f"  {findings[-1].detail}")
                continue
            return ProbeResult(None, findings, error.message, calls)
        calls += result.calls
        findings.append(ModeFinding(mode, True, "works"))
        say("  works")
        chosen = mode
        break
    else:
        result = None
    chosen = chosen or (accepted[0] if accepted else None)
    if chosen is None:
        return ProbeResult(None, findings, "the server refused every structured mode.", calls)
    probe = ProbeResult(
        chosen,
        findings,
        "",
        calls,
        result.text if result else "",
        result.latency_ms if result else 0,
    )
    configuration.structured_output = chosen
    configuration.structured_output_note = f"{timezone.now():%Y-%m-%d %H:%M} UTC: {probe.summary}"
    configuration.save(update_fields=["structured_output", "structured_output_note", "updated_at"])
    return probe


@dataclass(frozen=True)
class EndpointTestResult:
    ok: bool
    summary: str
    raw_reply: str
    error: str
    structured_output: str
    calls: list = field(default_factory=list)
    findings: list[ModeFinding] = field(default_factory=list)
    # What the probe said as it went, retries included, in order.
    progress: list[str] = field(default_factory=list)


def configuration_test(*, configuration: ModelConfiguration) -> EndpointTestResult:
    """Probe the structured modes (`structured_mode_probe`, which stores the strongest that
    works), uncached and recorded like any other call: what came back in each mode and what
    failed (connection, key, HTTP, JSON, schema or the token limit), for the configuration's
    page."""
    progress: list[str] = []
    probe = structured_mode_probe(configuration=configuration, on_progress=progress.append)
    calls = list(LLMCall.objects.filter(pk__in=[c.pk for c in probe.calls if c.pk]).order_by("id"))
    mode = configuration.get_structured_output_display()
    if probe.works:
        return EndpointTestResult(
            True,
            f"Structured output works in mode {probe.mode} ({probe.latency_ms} ms); stored on "
            "this configuration.",
            probe.reply,
            "",
            mode,
            calls,
            probe.findings,
            progress,
        )
    if probe.mode is None:
        return EndpointTestResult(
            False, "The call failed.", "", probe.error, mode, calls, probe.findings, progress
        )
    return EndpointTestResult(
        False,
        "The endpoint answered, but not with the JSON asked for in any mode; stored the "
        f"strongest mode it accepts ({probe.mode}).",
        calls[-1].response_text if calls else "",
        probe.summary,
        mode,
        calls,
        probe.findings,
        progress,
    )
