"""What the calibration table publishes that is not its own computation: the rule that keeps a
calibrated rate off every page below the stated minimum of expert verdicts, and the judge-only
rates it shows beside it, which are the run's published pass rates read back, not drawn again
(one figure, one interval, wherever it appears)."""

from __future__ import annotations

from django.utils.translation import gettext

from evaluations.models import EvaluationRun
from stats.estimates import Estimate
from stats.ppi import LABEL_MIN_BASE_SCENARIOS, LABEL_MIN_EXPERT_VERDICTS, enough_expert_verdicts

from ..models import RunAnalysis, SummaryLevel
from ..selectors import summary_estimates

ALL = "all"


def published_calibrated(calibrated: Estimate, n_rated: int, base_scenarios: int) -> Estimate:
    """The calibrated rate as every page and the API publish it: the figure from the stated
    minimum of expert verdicts on (`stats.ppi.enough_expert_verdicts`, the label's rule too),
    else no number and how far the sample is from it."""
    if not calibrated.defined or enough_expert_verdicts(n_rated, base_scenarios):
        return calibrated
    reason = gettext(
        "not enough expert verdicts yet (%(k)d of %(m)d, from %(g)d of %(h)d base scenarios)"
    ) % {
        "k": n_rated,
        "m": LABEL_MIN_EXPERT_VERDICTS,
        "g": base_scenarios,
        "h": LABEL_MIN_BASE_SCENARIOS,
    }
    return Estimate.insufficient(
        n=n_rated,
        n_clusters=base_scenarios,
        unit=calibrated.unit,
        method=calibrated.method,
        reason=reason,
        excluded=calibrated.excluded,
    )


def published_pass_rates(run: EvaluationRun) -> dict[tuple[int, str], Estimate]:
    """(target, polarity) -> the judge-only pass rate the run already publishes: each
    polarity's overall pass rate (the methodology's pass-rate table), and, for a panel of
    judges, the panel's rate over both polarities (the panel table). Two queries."""
    rates = {
        (target, polarity): estimate
        for (target, polarity, _, _), estimate in summary_estimates(
            run=run, level=SummaryLevel.OVERALL
        ).items()
    }
    panel = (
        RunAnalysis.objects.filter(run=run)
        .values_list("reliability__panel__panel_rates", flat=True)
        .first()
    )
    for row in panel or []:
        rates[(int(row["target"]), ALL)] = Estimate.from_dict(row["pass_rate"])
    return rates
