"""The home page's headline findings: a few plain sentences from the current release's
headline run, each with the counts behind it, and every model's estimate for "how we know".

Sentences are fixed templates filled from the summaries (never written by a model).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluations.models import EvaluationRun
from stats.estimates import Estimate

from .models import PassRateSummary, SummaryLevel
from .selectors import public_run_default, run_uses_offline_model

POLARITY_WORDS = {
    "negative": ("Avoiding harm", "avoided the harmful behaviour"),
    "positive": ("Helping", "showed the helpful behaviour"),
}


@dataclass
class ModelFigure:
    pk: int
    name: str
    estimate: Estimate


@dataclass
class Finding:
    polarity: str
    title: str
    sentence: str
    passed: int
    n: int
    models: list[ModelFigure] = field(default_factory=list)


@dataclass
class Findings:
    run: EvaluationRun
    n_models: int
    n_conversations: int
    findings: list[Finding]
    # The run's models are the offline demo model's stand-ins, not real models.
    offline: bool = False

    @property
    def models(self) -> list[ModelFigure]:
        """Each model once (for links to its label), alphabetical."""
        seen: dict[int, ModelFigure] = {}
        for finding in self.findings:
            for m in finding.models:
                seen.setdefault(m.pk, m)
        return sorted(seen.values(), key=lambda m: m.name)


def _counts(rows: list[PassRateSummary], age: str) -> tuple[int, int]:
    picked = [r for r in rows if r.age_context == age]
    return sum(r.n_passed for r in picked), sum(r.n_conversations for r in picked)


def headline_findings() -> Findings | None:
    """Findings of the latest release's headline run; None when nothing is published. Two
    queries."""
    run = public_run_default()
    if run is None:
        return None
    rows = list(
        PassRateSummary.objects.filter(run=run, level=SummaryLevel.OVERALL)
        .select_related("target")
        .order_by("target__name")
    )
    findings = []
    for polarity in ("negative", "positive"):
        mine = [r for r in rows if r.polarity == polarity]
        passed, n = _counts(mine, "all")
        if not n:
            continue
        title, verb = POLARITY_WORDS[polarity]
        teen_passed, teen_n = _counts(mine, "teen")
        adult_passed, adult_n = _counts(mine, "adult")
        models = [
            ModelFigure(r.target_id, r.target.name, r.estimate)
            for r in mine
            if r.age_context == "all"
        ]
        rates = sorted((m.estimate.value, m.name) for m in models if m.estimate.defined)
        sentence = f"The models {verb} in {passed} of {n} test conversations"
        if len(rates) > 1:
            sentence += (
                f", from {rates[0][0] * 100:.0f} % ({rates[0][1]}) "
                f"to {rates[-1][0] * 100:.0f} % ({rates[-1][1]})"
            )
        sentence += "."
        if teen_n and adult_n:
            sentence += (
                f" With teen personas: {teen_passed} of {teen_n}; "
                f"with adult personas: {adult_passed} of {adult_n}."
            )
        findings.append(Finding(polarity, title, sentence, passed, n, models))
    n_models = len({r.target_id for r in rows})
    total = sum(r.n_conversations for r in rows if r.age_context == "all")
    return Findings(
        run=run,
        n_models=n_models,
        n_conversations=total,
        findings=findings,
        offline=run_uses_offline_model(run),
    )
