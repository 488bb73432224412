"""What the label, the methodology page and the API say of a run's calibrated rates, read from
its stored calibration (`calibration.run_calibration`)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, ngettext

from evaluations.models import EvaluationRun
from stats.ppi import LABEL_MIN_BASE_SCENARIOS, LABEL_MIN_EXPERT_VERDICTS

from .calibration import CalibratedRate, Calibration, run_calibration
from .calibration_texts import calibration_steps, threshold_text


def label_calibration(run: EvaluationRun, target) -> dict[str, Any]:
    """What a target's label shows: its overall calibrated rate once large enough, else how
    many more expert ratings it needs."""
    calibration = run_calibration(run)
    return {
        "calibration": calibration,
        "calibration_rate": calibration.for_target(target.pk),
        "calibration_steps": calibration_steps(),
        "calibration_threshold": gettext("%(verdicts)s (from %(base_scenarios)s base scenarios)")
        % {"verdicts": LABEL_MIN_EXPERT_VERDICTS, "base_scenarios": LABEL_MIN_BASE_SCENARIOS},
    }


def label_calibration_reason(calibration: Calibration, rate: CalibratedRate | None) -> str:
    """Why a model's label shows no calibrated rate, in a sentence (blank when it shows one)."""
    if rate is not None and rate.on_label:
        return ""
    if calibration.reason:
        return gettext(calibration.reason)
    if rate is None:
        return gettext("The calibration sample holds none of this model's conversations.")
    return ngettext(
        "Not on the label yet: %(rated)s of this model's conversations rated by experts from "
        "%(bases)s base scenario; the label needs %(verdicts)s from %(base_scenarios)s.",
        "Not on the label yet: %(rated)s of this model's conversations rated by experts from "
        "%(bases)s base scenarios; the label needs %(verdicts)s from %(base_scenarios)s.",
        rate.base_scenarios_rated,
    ) % {
        "rated": rate.n_rated,
        "bases": rate.base_scenarios_rated,
        "verdicts": LABEL_MIN_EXPERT_VERDICTS,
        "base_scenarios": LABEL_MIN_BASE_SCENARIOS,
    }


def methodology_calibration(run: EvaluationRun) -> dict[str, Any]:
    """The methodology page's side-by-side table and the text saying how it fills."""
    return {
        "calibration": run_calibration(run),
        "calibration_threshold_text": threshold_text(),
        "calibration_steps": calibration_steps(),
    }
