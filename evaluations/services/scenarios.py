"""Writing scenarios: generation through the scenario-writer model (edits, retirement and
regeneration of one scenario: `services.scenario_edits`).

Generation has two steps so it can resume: the writer's three base situations become one
unexpanded row per (base situation × age context); each row is then expanded by its own call.
Slow model calls happen outside transactions; rows are written under a lock only if still
missing, so re-running (or two workers at once) never duplicates a scenario.
"""

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE
from core.progress import Progress, progress_ignore
from core.queueing import task_send
from llm.gateway import structured
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import configuration_for_role
from metrics_registry.models import AgeContexts, MetricVersion

from .. import prompts
from ..models import (
    DEFAULT_TURNS,
    MAX_TURNS,
    SCENARIO_BASE_COUNT,
    AgeContext,
    Scenario,
)
from ..schemas import (
    AdultScenarioExpansion,
    BaseSituationSet,
    FailureConditionDraft,
    ScenarioExpansion,
    TeenScenarioExpansion,
)

EXPANSION_SCHEMAS: dict[str, type[ScenarioExpansion]] = {
    AgeContext.TEEN: TeenScenarioExpansion,
    AgeContext.ADULT: AdultScenarioExpansion,
}


def age_contexts_for(version: MetricVersion) -> list[str]:
    """Teen and adult, unless the metric applies to one age group only."""
    if version.age_contexts == AgeContexts.TEEN:
        return [AgeContext.TEEN]
    if version.age_contexts == AgeContexts.ADULT:
        return [AgeContext.ADULT]
    return [AgeContext.TEEN, AgeContext.ADULT]


def anchors_fit(anchors: Iterable[dict], *, turns: int) -> list[dict]:
    """Anchors in their intended order, each on its own turn within 1..turns.

    Models sometimes put two anchors on one turn or past the end: later anchors move forward
    to the next free turn, then anchors past the end are pulled back (and the ones before them
    with them), so every anchor is raised, one per message, in order. When there are more
    anchors than turns, the last ones are dropped.
    """
    cleaned = []
    for position, anchor in enumerate(anchors):
        text = str(anchor.get("text", "")).strip()
        if not text:
            continue
        try:
            turn = int(anchor.get("turn", 1))
        except (TypeError, ValueError):
            turn = 1
        cleaned.append((max(1, turn), position, text))
    cleaned.sort()
    cleaned = cleaned[:turns]
    assigned: list[int] = []
    for turn, _position, _text in cleaned:
        assigned.append(max(turn, assigned[-1] + 1) if assigned else turn)
    for index in range(len(assigned) - 1, -1, -1):
        ceiling = turns if index == len(assigned) - 1 else assigned[index + 1] - 1
        assigned[index] = min(assigned[index], ceiling)
    return [
        {"turn": turn, "text": text} for turn, (_, _, text) in zip(assigned, cleaned, strict=True)
    ]


def _writer(configuration: ModelConfiguration | None) -> ModelConfiguration:
    return configuration or configuration_for_role(ModelRole.SCENARIO_WRITER)


def _missing_slots(
    version: MetricVersion, language: str = DEFAULT_LANGUAGE
) -> list[tuple[int, str]]:
    # Generation writes the set in one language (the default unless asked); a set in another
    # language shares the base indexes, so the same slot there is the same situation's variant.
    present = set(
        Scenario.objects.active()
        .filter(metric_version=version, language=language)
        .values_list("base_index", "age_context")
    )
    return [
        (base_index, age)
        for base_index in range(SCENARIO_BASE_COUNT)
        for age in age_contexts_for(version)
        if (base_index, age) not in present
    ]


def scenario_base_situations_create(
    *,
    metric_version: MetricVersion,
    configuration: ModelConfiguration | None = None,
    language: str = DEFAULT_LANGUAGE,
    country: str = "",
) -> list[Scenario]:
    """Ask for three base situations and create the missing unexpanded rows. Idempotent.

    In a `language` other than the default the writer writes them natively in it (provenance
    native), set in `country` when given."""
    if not _missing_slots(metric_version, language):
        return []
    writer = _writer(configuration)
    result = structured(
        configuration=writer,
        messages=prompts.base_situations_messages(
            metric_version, language=language, country=country
        ),
        schema=BaseSituationSet,
        role=ModelRole.SCENARIO_WRITER,
        purpose="evaluations.scenario_base_situations",
    )
    created = []
    for base_index, age in _missing_slots(metric_version, language):
        draft = result.output.situations[base_index]
        adapted = draft.teen_version if age == AgeContext.TEEN else draft.adult_version
        try:
            with transaction.atomic():
                created.append(
                    Scenario.objects.create(
                        metric_version=metric_version,
                        base_index=base_index,
                        age_context=age,
                        base_situation=draft.situation.strip(),
                        situation=adapted.strip(),
                        generated_call_ids=list(result.call_ids),
                        is_offline=result.is_offline,
                        language=language,
                        country=country,
                    )
                )
        except IntegrityError:
            continue  # Another worker wrote this slot first; its row stands.
    return created


def scenario_failure_condition_write(
    *, scenario: Scenario, configuration: ModelConfiguration | None = None
) -> Scenario:
    """Write the failure condition the judge reads, from the metric and the situation only.

    Runs before the expansion, so the hidden goal does not exist yet when this is written and
    cannot leak into it (the judge must judge the assistant, not the user's secret aim).
    Idempotent: a scenario that has one keeps it.
    """
    if scenario.failure_condition:
        return scenario
    result = structured(
        configuration=_writer(configuration),
        messages=prompts.failure_condition_messages(scenario=scenario),
        schema=FailureConditionDraft,
        role=ModelRole.SCENARIO_WRITER,
        purpose="evaluations.scenario_failure_condition",
        seed=scenario.generation or None,
    )
    with transaction.atomic():
        locked = Scenario.objects.select_for_update().get(pk=scenario.pk)
        if not locked.failure_condition:
            locked.failure_condition = result.output.failure_condition.strip()
            locked.generated_call_ids = [*locked.generated_call_ids, *result.call_ids]
            locked.is_offline = locked.is_offline or result.is_offline
            locked.save(
                update_fields=[
                    "failure_condition",
                    "generated_call_ids",
                    "is_offline",
                    "updated_at",
                ]
            )
    return locked


def scenario_expand(
    *,
    scenario: Scenario,
    configuration: ModelConfiguration | None = None,
    turns: int = DEFAULT_TURNS,
) -> Scenario:
    """Write the failure condition, then expand into persona, goals and anchors. Idempotent."""
    if scenario.is_expanded:
        return scenario
    if not 1 <= turns <= MAX_TURNS:
        raise ApplicationError(
            _("Scenarios are written for 1 to %(max_turns)s turns, not %(turns)s.")
            % {"max_turns": MAX_TURNS, "turns": turns}
        )
    writer = _writer(configuration)
    scenario = scenario_failure_condition_write(scenario=scenario, configuration=writer)
    result = structured(
        configuration=writer,
        messages=prompts.expansion_messages(scenario=scenario, turns=turns),
        schema=EXPANSION_SCHEMAS[scenario.age_context],
        role=ModelRole.SCENARIO_WRITER,
        purpose="evaluations.scenario_expand",
        # A regenerated scenario must not come back from the response cache unchanged.
        seed=scenario.generation or None,
    )
    expansion = result.output
    with transaction.atomic():
        locked = Scenario.objects.select_for_update().get(pk=scenario.pk)
        if locked.is_expanded:
            return locked
        locked.persona = _persona_stored(expansion.persona.model_dump())
        locked.user_goal = expansion.user_goal.strip()
        locked.latent_adversarial_goal = expansion.latent_adversarial_goal.strip()
        locked.anchors = anchors_fit([a.model_dump() for a in expansion.anchors], turns=turns)
        locked.generated_call_ids = [*locked.generated_call_ids, *result.call_ids]
        locked.is_offline = locked.is_offline or result.is_offline
        locked.expanded_at = timezone.now()
        locked.save()
    return locked


def _persona_stored(persona: dict) -> dict:
    """The persona as stored: a blank dialect (the standard language) is left out."""
    if not str(persona.get("dialect") or "").strip():
        persona.pop("dialect", None)
    return persona


def scenarios_generate(
    *,
    metric_version: MetricVersion,
    configuration: ModelConfiguration | None = None,
    turns: int = DEFAULT_TURNS,
    on_progress: Progress = progress_ignore,
    language: str = DEFAULT_LANGUAGE,
    country: str = "",
) -> list[Scenario]:
    """The metric version's six (or three, for a single age group) expanded scenarios.

    Creates whatever is missing and expands whatever is unexpanded; re-running after a crash
    or on a complete set makes no new rows and, for complete sets, no model calls.
    `on_progress(done, total)` counts the scenarios expanded of those pending after the base
    situations are written. `language` and `country` write a native set in that language.
    """
    scenario_base_situations_create(
        metric_version=metric_version,
        configuration=configuration,
        language=language,
        country=country,
    )
    pending = list(
        Scenario.objects.active().filter(metric_version=metric_version, expanded_at=None)
    )
    on_progress(0, len(pending))
    for done, scenario in enumerate(pending, 1):
        scenario_expand(scenario=scenario, configuration=configuration, turns=turns)
        on_progress(done, len(pending))
    return list(
        Scenario.objects.active()
        .filter(metric_version=metric_version)
        .order_by("base_index", "-age_context")
    )


def scenarios_generate_enqueue(*, metric_version: MetricVersion) -> None:
    """Generate in the background once the current transaction commits."""
    transaction.on_commit(
        lambda: task_send("evaluations.tasks.llm_generate_scenarios", metric_version.pk)
    )
