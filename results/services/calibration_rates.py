"""The calibrated rates of a run as pages and the API read them: one rate per target and
polarity over every language, and, when the run's judged conversations span several languages,
each target's rate per language (`results.services.calibration` computes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.languages import languages_pooled_note
from stats.estimates import Estimate
from stats.ppi import LABEL_MIN_BASE_SCENARIOS, LABEL_MIN_EXPERT_VERDICTS, large_enough_for_label

from .calibration_texts import NOT_DRAWN, NOT_RATED, THRESHOLD_TEXT, calibration_how_to_fill

ALL = "all"
POLARITIES = (ALL, "positive", "negative")


@dataclass(frozen=True)
class CalibratedRate:
    """One target's (or one target-polarity's) judge-only and calibrated pass rates."""

    target_id: int
    target_name: str
    polarity: str
    judge_only: Estimate
    calibrated: Estimate
    n_judged: int  # conversations with a judge verdict
    n_sample: int  # of them drawn into the calibration sample
    n_rated: int  # of those with an expert verdict so far
    base_scenarios_rated: int
    excluded_no_verdict: int  # failed or panel-tied conversations, outside both figures
    # Blank for the rates over every language; a tag for a rate over that language alone.
    language: str = ""

    @property
    def on_label(self) -> bool:
        return self.polarity == ALL and large_enough_for_label(self.calibrated)

    @property
    def ratings_needed(self) -> int:
        """More rated conversations this target needs before its label shows the figure."""
        return max(0, LABEL_MIN_EXPERT_VERDICTS - self.n_rated)

    @property
    def base_scenarios_needed(self) -> int:
        return max(0, LABEL_MIN_BASE_SCENARIOS - self.base_scenarios_rated)

    def as_api(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "target_name": self.target_name,
            "polarity": self.polarity,
            "judge_only": self.judge_only.as_dict(),
            "calibrated": self.calibrated.as_dict(),
            "n_judged": self.n_judged,
            "n_calibration_sample": self.n_sample,
            "n_expert_rated": self.n_rated,
            "base_scenarios_rated": self.base_scenarios_rated,
            "excluded_without_verdict": self.excluded_no_verdict,
            "on_label": self.on_label,
            "ratings_needed_for_label": self.ratings_needed,
            "base_scenarios_needed_for_label": self.base_scenarios_needed,
            "language": self.language,
        }


@dataclass(frozen=True)
class Calibration:
    """A run's calibrated rates, and the queue they come from (None: no sample drawn yet)."""

    queue_id: int | None
    queue_name: str
    rates: list[CalibratedRate] = field(default_factory=list)
    synthetic: bool = False
    # Each target's rate over each language alone, when the judged conversations span more
    # than one: `rates` then pool the languages, and say so (`pooled_note`).
    by_language: list[CalibratedRate] = field(default_factory=list)

    @property
    def pooled_note(self) -> str:
        """The pooling said in words (pooled across English and Spanish items); "" for one."""
        languages = sorted({rate.language for rate in self.by_language})
        return languages_pooled_note(languages) if languages else ""

    @property
    def drawn(self) -> bool:
        return self.queue_id is not None

    @property
    def rated(self) -> int:
        return sum(r.n_rated for r in self.rates if r.polarity == ALL)

    @property
    def reason(self) -> str:
        """Why no calibrated figure shows yet (blank once experts have rated)."""
        if not self.drawn:
            return NOT_DRAWN
        return NOT_RATED if self.rated == 0 else ""

    def for_target(self, target_id: int, polarity: str = ALL) -> CalibratedRate | None:
        return next(
            (r for r in self.rates if r.target_id == target_id and r.polarity == polarity), None
        )

    def as_api(self) -> dict[str, Any]:
        return {
            "calibration_queue": self.queue_id,
            "expert_rated": self.rated,
            "synthetic": self.synthetic,
            "threshold": {
                "min_expert_verdicts": LABEL_MIN_EXPERT_VERDICTS,
                "min_base_scenarios": LABEL_MIN_BASE_SCENARIOS,
                "text": THRESHOLD_TEXT,
            },
            "reason": self.reason,
            "how_to_fill": calibration_how_to_fill() if self.rated == 0 else "",
            "excluded": "Conversations without a verdict (failed or panel ties) are outside "
            "both rates; triage-queue ratings are never used; conversations held for blind "
            "expert review, and a blind queue's verdicts, count once the queue closes.",
            "rates": [r.as_api() for r in self.rates],
            "pooled_languages": self.pooled_note,
            "rates_by_language": [r.as_api() for r in self.by_language],
        }
