"""Scenarios, evaluation runs, simulated conversations and judge verdicts.

Every model and choice is importable from here (`from evaluations.models import Scenario`).
"""

from .conversations import (
    AnchorCoverage,
    AnchorRecheck,
    Conversation,
    ConversationStatus,
    FailureKind,
    Judgment,
    Turn,
)
from .crisis import CrisisLine
from .fidelity import CRITERION_FIELDS, FidelityCriterion, FidelityReading
from .imports import TranscriptFormat, TranscriptImport
from .panel import RunJudge
from .rubrics import RubricGrade, RubricResponse
from .runs import DEFAULT_TURNS, MAX_TURNS, EvaluationRun, RubricGrading, RunStatus
from .scenarios import (
    ADULT_MIN_AGE,
    SCENARIO_BASE_COUNT,
    TEEN_AGES,
    AgeContext,
    Scenario,
    ScenarioQuerySet,
    ScenarioStatus,
    TranslationProvenance,
)
from .swap import Swapped, SwapStudy

__all__ = [
    "CrisisLine",
    "ADULT_MIN_AGE",
    "CRITERION_FIELDS",
    "DEFAULT_TURNS",
    "MAX_TURNS",
    "SCENARIO_BASE_COUNT",
    "TEEN_AGES",
    "AgeContext",
    "AnchorCoverage",
    "AnchorRecheck",
    "Conversation",
    "ConversationStatus",
    "EvaluationRun",
    "FailureKind",
    "FidelityCriterion",
    "FidelityReading",
    "Judgment",
    "RubricGrade",
    "RubricGrading",
    "RubricResponse",
    "RunJudge",
    "RunStatus",
    "Scenario",
    "SwapStudy",
    "Swapped",
    "ScenarioQuerySet",
    "ScenarioStatus",
    "TranslationProvenance",
    "TranscriptFormat",
    "TranscriptImport",
    "Turn",
]
