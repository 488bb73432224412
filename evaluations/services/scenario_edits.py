"""Changing written scenarios: researchers' edits, retirement, regeneration of one slot.

A scenario already used in conversations is never changed in place (those transcripts must keep
meaning what they meant): an edit retires it and saves the edit as a new active scenario, and
regeneration retires it for a successor in the same slot that the writer expands afresh
(`services.scenarios.scenario_expand`).
"""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from llm.models import ModelConfiguration

from ..models import DEFAULT_TURNS, MAX_TURNS, Scenario, ScenarioStatus
from ..schemas import MAX_ANCHORS, PERSONA_DIALECT_MAX_LENGTH
from .scenarios import anchors_fit, scenario_expand

EDITABLE_FIELDS = (
    "situation",
    "persona",
    "user_goal",
    "latent_adversarial_goal",
    "anchors",
    "failure_condition",
    "language",
    "country",
)


def _validate_edit(fields: dict[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ApplicationError(
            _("These scenario fields cannot be edited: %(items)s.") % {"items": ", ".join(unknown)}
        )
    if "persona" in fields:
        persona = fields["persona"]
        if not isinstance(persona, dict) or not str(persona.get("gender", "")).strip():
            raise ApplicationError(_("The persona needs at least an age and a gender."))
        if not isinstance(persona.get("age"), int):
            raise ApplicationError(_("The persona's age must be a whole number."))
        dialect = persona.get("dialect", "")
        if not isinstance(dialect, str) or len(dialect) > PERSONA_DIALECT_MAX_LENGTH:
            raise ApplicationError(
                _(
                    "The persona's dialect is a short text (at most "
                    "%(persona_dialect_max_length)s characters), such as “Mexican "
                    "Spanish, informal”."
                )
                % {"persona_dialect_max_length": PERSONA_DIALECT_MAX_LENGTH}
            )
    if "anchors" in fields:
        anchors = fields["anchors"]
        if not isinstance(anchors, list) or not anchors:
            raise ApplicationError(_("A scenario needs at least one anchor."))
        if len(anchors) > MAX_ANCHORS:
            raise ApplicationError(
                _("A scenario has at most %(max_anchors)s anchors.") % {"max_anchors": MAX_ANCHORS}
            )
        fields["anchors"] = anchors_fit(anchors, turns=MAX_TURNS)
    return fields


@transaction.atomic
def scenario_update(*, scenario: Scenario, actor: AbstractBaseUser, **fields: Any) -> Scenario:
    """Edit a scenario, recording who and when.

    A scenario already used in conversations is not changed in place (those transcripts must
    keep meaning what they meant): it is retired and the edit becomes a new active scenario.
    """
    fields = _validate_edit(fields)
    scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
    if not scenario.is_active:
        raise ApplicationError(_("This scenario is retired; edit the active one that replaced it."))
    if not scenario.is_expanded:
        raise ApplicationError(_("This scenario is still being written; edit it once it is done."))
    now = timezone.now()
    if scenario.conversations.exists():
        _retire(scenario, actor=actor, when=now)
        scenario.pk = None
        scenario._state.adding = True
        scenario.status = ScenarioStatus.ACTIVE
        scenario.retired_by = None
        scenario.retired_at = None
        scenario.created_at = None
    for name, value in fields.items():
        setattr(scenario, name, value)
    scenario.edited_by = actor
    scenario.edited_at = now
    scenario.save()
    return scenario


def _retire(scenario: Scenario, *, actor: AbstractBaseUser | None, when) -> None:
    scenario.status = ScenarioStatus.RETIRED
    scenario.retired_by = actor
    scenario.retired_at = when
    scenario.save(update_fields=["status", "retired_by", "retired_at", "updated_at"])


@transaction.atomic
def scenario_retire(*, scenario: Scenario, actor: AbstractBaseUser) -> Scenario:
    scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
    if not scenario.is_active:
        raise ApplicationError(_("This scenario is already retired."))
    _retire(scenario, actor=actor, when=timezone.now())
    return scenario


@transaction.atomic
def scenario_regenerate_start(*, scenario: Scenario, actor: AbstractBaseUser) -> Scenario:
    """Retire `scenario` (if active) and create its unexpanded successor for the same slot.

    The successor keeps the situation and gets a fresh expansion (a new generation number
    varies the seed); call `scenario_expand` on it, or let the generation task do it.
    """
    scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
    slot = Scenario.objects.filter(
        metric_version=scenario.metric_version,
        base_index=scenario.base_index,
        age_context=scenario.age_context,
        language=scenario.language,
    )
    if scenario.is_active:
        _retire(scenario, actor=actor, when=timezone.now())
    elif slot.active().exists():
        raise ApplicationError(
            _("This scenario was already replaced; regenerate the active one instead.")
        )
    latest_generation = max(slot.values_list("generation", flat=True))
    return Scenario.objects.create(
        metric_version=scenario.metric_version,
        base_index=scenario.base_index,
        age_context=scenario.age_context,
        base_situation=scenario.base_situation,
        situation=scenario.situation,
        generation=latest_generation + 1,
        is_offline=scenario.is_offline,
        language=scenario.language,
        country=scenario.country,
    )


def scenario_regenerate(
    *,
    scenario: Scenario,
    actor: AbstractBaseUser,
    configuration: ModelConfiguration | None = None,
    turns: int = DEFAULT_TURNS,
) -> Scenario:
    """Replace a scenario by a freshly expanded one (synchronously; the web uses a task)."""
    successor = scenario_regenerate_start(scenario=scenario, actor=actor)
    return scenario_expand(scenario=successor, configuration=configuration, turns=turns)
