"""Public results pages: thin views over the selectors; they only read precomputed rows."""

from typing import Any

from django.urls import reverse
from django.views.generic import TemplateView

from evaluations.evidence_support import MIN_CONTENT_WORDS
from evaluations.models import EvaluationRun

from ..language_pages import language_gap_panels
from ..methodology_plots import methodology_plots, model_difference_plots
from ..plain import methodology_lead
from ..selectors import (
    metric_labels_for_versions,
    overall_pass_rates,
    public_runs,
    run_is_synthetic,
    run_targets,
    run_uses_offline_model,
)
from ..services.calibration_pages import methodology_calibration
from ..services.expert_figures import INLINE_PER_METRIC, release_expert_figures_frozen
from ..services.fidelity import fidelity_from_reliability, fidelity_labelled
from ..services.frozen_figures import run_validity_frozen, run_validity_live_reason
from ..services.judge_trust import HOW_TO_FILL, judge_family_effect, run_agreement_gaps
from ..services.judge_trust import THRESHOLDS as TRUST_THRESHOLDS
from ..services.run_cost import run_cost_view
from .common import PublicRunMixin

PER_METRIC_SHOWN = 15


class MethodologyView(PublicRunMixin, TemplateView):
    template_name = "results/methodology.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        runs = public_runs()
        run = self.get_run(with_analysis=True)
        context["runs"] = runs[:50]
        context["run"] = run
        context["private"] = self.private
        if run is None:
            return context
        analysis = run.analysis
        judge = analysis.reliability.get("judge", {})
        panel = analysis.reliability.get("panel", {})
        teen_adult = analysis.robustness.get("teen_adult", {})
        largest = teen_adult.get("largest", [])
        labels = metric_labels_for_versions(d["metric_version"] for d in largest)
        overall = list(overall_pass_rates(run=run))
        targets = run_targets(run)
        context.update(
            teen_adult_rows=[
                {**d, **labels.get(d["metric_version"], {"key": d["metric"], "name": ""})}
                for d in largest
            ],
            teen_adult_fallbacks=list(
                dict.fromkeys(r["lang"] for r in labels.values() if r["lang"])
            ),
            analysis=analysis,
            judge=judge,
            judge_per_metric=judge.get("per_metric", [])[:PER_METRIC_SHOWN],
            panel=panel,
            panel_per_metric=panel.get("per_metric", [])[:PER_METRIC_SHOWN],
            experts=analysis.reliability.get("experts", {}),
            anchors=analysis.reliability.get("anchors", {}),
            evidence=analysis.reliability.get("evidence", {}),
            # Stored with the analysis: no query of its own.
            fidelity=fidelity_labelled(fidelity_from_reliability(analysis.reliability)),
            fidelity_api_url=reverse("results-api:run-fidelity", args=[run.pk]),
            min_content_words=MIN_CONTENT_WORDS,
            polarities=[
                (polarity, data)
                for polarity, data in analysis.robustness.get("polarities", {}).items()
                if data
            ],
            teen_adult=teen_adult,
            # Stored with the analysis: no query of its own.
            language_gaps=language_gap_panels(run, stored=analysis.robustness.get("languages", {})),
            failed_as_fail=analysis.robustness.get("failed_as_fail", []),
            endorsement=analysis.reliability.get("endorsement", {}),
            has_lobo=any(
                s["scheme"].startswith("leave out ")
                for data in analysis.robustness.get("polarities", {}).values()
                if data
                for s in data["schemes"]
            ),
            overall=overall,
            lead=methodology_lead(overall),
            targets=targets,
            offline=run_uses_offline_model(run),
            synthetic=run_is_synthetic(run),
            judge_family=judge_family_effect(run),
            trust_thresholds=TRUST_THRESHOLDS,
            judge_gaps=_judge_gaps(run, targets),
            trust_how_to_fill=HOW_TO_FILL,
            # Frozen when the release was published: never today's ratings (one query).
            release_experts=release_expert_figures_frozen(run.release_id),
            expert_per_metric_limit=INLINE_PER_METRIC,
            staff_reader=self.is_staff_reader(),
            # Swap studies' figures are stored with the analysis: no query of their own.
            swap_studies=analysis.robustness.get("swap", []),
            # Stored with the analysis: no query of its own.
            cost=run_cost_view(analysis.cost),
        )
        context.update(methodology_calibration(run))
        # The run's validity section: frozen with its release when it was (no query; read from
        # the release's frozen row above), else the live figures, labelled as such.
        context["run_validity"] = run_validity_frozen(context["release_experts"], run.pk)
        if context["run_validity"] is None:
            context["run_validity_live_reason"] = run_validity_live_reason(
                context["release_experts"], run
            )
        context["difference_plots"] = model_difference_plots(
            analysis.robustness.get("polarities", {})
        )
        context["plots"] = methodology_plots(
            overall=context["overall"], teen_adult=context["teen_adult"], judge=judge
        )
        return context


def _judge_gaps(run: EvaluationRun, targets) -> list[tuple[Any, Any]]:
    """Each model with its judge agreement against the other models' (None: not compared)."""
    gaps = run_agreement_gaps(run)
    return [(target, gaps.get(target.pk)) for target in targets if target.pk in gaps]
