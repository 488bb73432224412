"""What the label, the methodology page and the API say of a run's calibrated rates, read from
its stored calibration (`calibration.run_calibration`)."""

from __future__ import annotations

from typing import Any

from evaluations.models import EvaluationRun
from stats.ppi import LABEL_MIN_BASE_SCENARIOS, LABEL_MIN_EXPERT_VERDICTS

from .calibration import CalibratedRate, Calibration, run_calibration
from .calibration_texts import THRESHOLD_TEXT, calibration_steps


def label_calibration(run: EvaluationRun, target) -> dict[str, Any]:
    """What a target's label shows: its overall calibrated rate once large enough, else how
    many more expert ratings it needs."""
    calibration = run_calibration(run)
    return {
        "calibration": calibration,
        "calibration_rate": calibration.for_target(target.pk),
        "calibration_steps": calibration_steps(),
        "calibration_threshold": (
            f"{LABEL_MIN_EXPERT_VERDICTS} (from {LABEL_MIN_BASE_SCENARIOS} base scenarios)"
        ),
    }


def label_calibration_reason(calibration: Calibration, rate: CalibratedRate | None) -> str:
    """Why a model's label shows no calibrated rate, in a sentence (blank when it shows one)."""
    if rate is not None and rate.on_label:
        return ""
    if calibration.reason:
        return calibration.reason
    if rate is None:
        return "The calibration sample holds none of this model's conversations."
    return (
        f"Not on the label yet: {rate.n_rated} of this model's conversations rated by experts "
        f"from {rate.base_scenarios_rated} base scenarios; the label needs "
        f"{LABEL_MIN_EXPERT_VERDICTS} from {LABEL_MIN_BASE_SCENARIOS}."
    )


def methodology_calibration(run: EvaluationRun) -> dict[str, Any]:
    """The methodology page's side-by-side table and the text saying how it fills."""
    return {
        "calibration": run_calibration(run),
        "calibration_threshold_text": THRESHOLD_TEXT,
        "calibration_steps": calibration_steps(),
    }
