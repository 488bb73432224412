"""Machine-translated scenarios and their review by someone who reads the language.

The scenario writer translates an expanded scenario into another language
(`scenario_translate`): the variant keeps the metric, base situation and age context (the same
`base_index`, so results can pair the two) and is recorded as a machine translation. A machine
translation can change what a scenario tests (a softened risk, a lost idiom), so a translated
scenario stays out of runs (`ScenarioQuerySet.runnable`) until an expert reviewer who has
declared they read its language has read it.
"""

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.countries import country_code_normalize
from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE, language_display_name, language_tag_normalize
from core.queueing import task_send
from core.roles import Role, user_has_role
from core.services import ReviewRefusals, reader_language_declare, translation_review_check
from llm.gateway import structured
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import configuration_for_role
from metrics_registry.models import MetricVersion

from .. import prompts
from ..models import MAX_TURNS, AgeContext, Scenario, TranslationProvenance
from ..models.scenarios import ScenarioQuerySet
from ..schemas import AdultPersonaSheet, ScenarioTranslation, TeenPersonaSheet
from .scenarios import anchors_fit


class TeenScenarioTranslation(ScenarioTranslation):
    persona: TeenPersonaSheet


class AdultScenarioTranslation(ScenarioTranslation):
    persona: AdultPersonaSheet


TRANSLATION_SCHEMAS: dict[str, type[ScenarioTranslation]] = {
    AgeContext.TEEN: TeenScenarioTranslation,
    AgeContext.ADULT: AdultScenarioTranslation,
}


def _variant(scenario: Scenario, language: str) -> ScenarioQuerySet:
    return Scenario.objects.active().filter(
        metric_version=scenario.metric_version,
        base_index=scenario.base_index,
        age_context=scenario.age_context,
        language=language,
    )


def _translation_target_language(language: str) -> tuple[str, None]:
    try:
        return language_tag_normalize(language), None
    except ValidationError as error:
        raise ApplicationError(error.messages[0]) from error


def _translation_target(scenario: Scenario, language: str, country: str | None) -> tuple[str, str]:
    try:
        language = language_tag_normalize(language)
        if country is None:
            country = scenario.country
        elif country.strip():
            country = country_code_normalize(country)
    except ValidationError as error:
        raise ApplicationError(error.messages[0]) from error
    if not scenario.is_expanded:
        raise ApplicationError(_("This scenario is still being written; translate it once done."))
    if language == scenario.language:
        raise ApplicationError(_("This scenario is already in that language."))
    if _variant(scenario, language).exists():
        raise ApplicationError(
            _("This situation already has an active scenario in %(language)s.")
            % {"language": language_display_name(language)}
        )
    return language, country


def scenario_translate(
    *,
    scenario: Scenario,
    language: str,
    country: str | None = None,
    configuration: ModelConfiguration | None = None,
) -> Scenario:
    """The scenario in `language`, written by the scenario writer as a machine translation.

    `country` sets where the translated persona lives (the original's when None: a Spanish
    variant of a scenario set in the US stays in the US). The slow call happens outside a
    transaction; the row is written only if no other variant in that language appeared
    meanwhile."""
    language, country = _translation_target(scenario, language, country)
    writer = configuration or configuration_for_role(ModelRole.SCENARIO_WRITER)
    result = structured(
        configuration=writer,
        messages=prompts.translation_messages(
            scenario=scenario, language=language, country=country
        ),
        schema=TRANSLATION_SCHEMAS[scenario.age_context],
        role=ModelRole.SCENARIO_WRITER,
        purpose="evaluations.scenario_translate",
    )
    draft = result.output
    persona = draft.persona.model_dump()
    if not persona.get("dialect"):
        persona.pop("dialect", None)
    try:
        with transaction.atomic():
            if _variant(scenario, language).exists():
                raise ApplicationError(
                    _("This situation already has an active scenario in %(language)s.")
                    % {"language": language_display_name(language)}
                )
            return Scenario.objects.create(
                metric_version=scenario.metric_version,
                base_index=scenario.base_index,
                age_context=scenario.age_context,
                base_situation=draft.base_situation.strip(),
                situation=draft.situation.strip(),
                persona=persona,
                user_goal=draft.user_goal.strip(),
                latent_adversarial_goal=draft.latent_adversarial_goal.strip(),
                anchors=anchors_fit([a.model_dump() for a in draft.anchors], turns=MAX_TURNS),
                failure_condition=draft.failure_condition.strip(),
                language=language,
                country=country,
                translation_provenance=TranslationProvenance.MACHINE,
                generated_call_ids=list(result.call_ids),
                is_offline=result.is_offline,
                expanded_at=timezone.now(),
            )
    except IntegrityError as error:  # another request wrote the variant first
        raise ApplicationError(
            _("This situation already has an active scenario in %(language)s.")
            % {"language": language_display_name(language)}
        ) from error


def scenario_translation_enqueue(*, scenario: Scenario, language: str, country: str = "") -> str:
    """Check the request and have a worker translate the scenario once the current transaction
    commits (the writer's call is too slow for a page). Returns the normalised language tag."""
    language, country = _translation_target(scenario, language, country or None)
    transaction.on_commit(
        lambda: task_send(
            "evaluations.tasks.llm_translate_scenario", scenario.pk, language, country
        )
    )
    return language


def scenarios_translate(
    *,
    metric_version: MetricVersion,
    language: str,
    country: str | None = None,
    configuration: ModelConfiguration | None = None,
    base_indexes: Iterable[int] | None = None,
) -> list[Scenario]:
    """Machine translations into `language` of the version's active default-language
    scenarios that have no variant in it yet (of `base_indexes` only, when given). Re-running
    translates only what is still missing."""
    tag, _country = _translation_target_language(language)
    originals = (
        Scenario.objects.active()
        .expanded()
        .filter(metric_version=metric_version, language=DEFAULT_LANGUAGE)
        .order_by("base_index", "-age_context")
    )
    if base_indexes is not None:
        originals = originals.filter(base_index__in=list(base_indexes))
    return [
        scenario_translate(
            scenario=original, language=tag, country=country, configuration=configuration
        )
        for original in originals
        if not _variant(original, tag).exists()
    ]


REVIEW_REFUSALS = ReviewRefusals(
    not_reviewer=gettext_lazy("Only an expert reviewer can review a scenario's translation."),
    native=gettext_lazy("This scenario was written natively: it has no translation."),
    already_reviewed=gettext_lazy("This scenario's translation has already been reviewed."),
)


@transaction.atomic
def scenario_translation_review(
    *, scenario: Scenario, reviewer: User, declare_reads_language: bool = False
) -> Scenario:
    """Mark a machine-translated scenario as reviewed by `reviewer`, who must read its language.

    `declare_reads_language` records the reviewer's declaration that they read it (the
    review form's checkbox) before the check.
    """
    scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
    if declare_reads_language and user_has_role(reviewer, Role.EXPERT_REVIEWER):
        reader_language_declare(user=reviewer, language=scenario.language)
    # The writer is the scenario-writing model, never a person: no one is barred as its author.
    translation_review_check(
        reviewer=reviewer,
        provenance=scenario.translation_provenance,
        language=scenario.language,
        refusals=REVIEW_REFUSALS,
    )
    scenario.translation_provenance = TranslationProvenance.MACHINE_REVIEWED
    scenario.translation_reviewed_by = reviewer
    scenario.translation_reviewed_at = timezone.now()
    scenario.save(
        update_fields=[
            "translation_provenance",
            "translation_reviewed_by",
            "translation_reviewed_at",
            "updated_at",
        ]
    )
    return scenario
