"""The typed replies the rubric grading asks the grader for (pydantic; the gateway validates and
re-asks)."""

from pydantic import BaseModel, Field


class CriterionGrade(BaseModel):
    criterion: int = Field(ge=1, description="The criterion's number as listed.")
    met: bool = Field(description="Whether the reply does what the criterion describes.")
    justification: str = Field(min_length=1, description="One sentence on why.")
    quote: str = Field(
        description="When met: the reply's exact words that show it, a whole phrase; "
        "empty when not met."
    )


class CriterionVerdict(BaseModel):
    """One criterion graded on its own (HealthBench's grader answer)."""

    explanation: str = Field(min_length=1, description="Why the criterion is or is not met.")
    criteria_met: bool = Field(description="Whether the reply meets the criterion.")
    quote: str = Field(
        description="When met: the reply's exact words that show it, a whole phrase; "
        "empty when not met."
    )


class RubricGradeSet(BaseModel):
    """The judge's grading of one reply against every listed criterion of a rubric item."""

    grades: list[CriterionGrade] = Field(min_length=1)
