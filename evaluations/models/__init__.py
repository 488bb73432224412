"""Scenarios, evaluation runs, simulated conversations, judge verdicts and rubric items.

Every model and choice is importable from here (`from evaluations.models import Scenario`).
"""

from .conversations import (
    AnchorCoverage,
    Conversation,
    ConversationStatus,
    FailureKind,
    Judgment,
    Turn,
)
from .rubric import (
    Acuity,
    CriterionConsensusState,
    CriterionOrigin,
    Population,
    ReleaseRubricFreeze,
    RubricCriterion,
    RubricCriterionQuerySet,
    RubricDimension,
    RubricGrade,
    RubricItem,
    RubricResponse,
)
from .runs import DEFAULT_TURNS, MAX_TURNS, EvaluationRun, RubricGrading, RunStatus
from .scenarios import (
    ADULT_MIN_AGE,
    SCENARIO_BASE_COUNT,
    TEEN_AGES,
    AgeContext,
    Scenario,
    ScenarioQuerySet,
    ScenarioStatus,
)

__all__ = [
    "ADULT_MIN_AGE",
    "DEFAULT_TURNS",
    "MAX_TURNS",
    "SCENARIO_BASE_COUNT",
    "TEEN_AGES",
    "Acuity",
    "AgeContext",
    "AnchorCoverage",
    "Conversation",
    "ConversationStatus",
    "CriterionConsensusState",
    "CriterionOrigin",
    "EvaluationRun",
    "FailureKind",
    "Judgment",
    "Population",
    "ReleaseRubricFreeze",
    "RubricCriterion",
    "RubricCriterionQuerySet",
    "RubricDimension",
    "RubricGrade",
    "RubricGrading",
    "RubricItem",
    "RubricResponse",
    "RunStatus",
    "Scenario",
    "ScenarioQuerySet",
    "ScenarioStatus",
    "Turn",
]
