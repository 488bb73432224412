"""The home page's headline findings: a few plain sentences from the current release's
headline run, each with the counts behind it, and every model's estimate for "how we know".

Sentences are fixed templates filled from the summaries (never written by a model).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.languages import language_display_name
from evaluations.models import EvaluationRun
from stats.estimates import Estimate

from .grades import percent_words
from .models import PassRateSummary, SummaryLevel
from .selectors import public_run_default, run_uses_offline_model
from .services.languages import pooled_languages_note

POLARITY_WORDS = {
    "negative": _("Avoiding harm"),
    "positive": _("Helping"),
}
# The headline sentence per polarity, whole, without and with the models' range.
FINDING_SENTENCES = {
    "negative": (
        _("The models avoided the harmful behaviour in %(passed)s of %(n)s test conversations."),
        _(
            "The models avoided the harmful behaviour in %(passed)s of %(n)s test "
            "conversations, from %(low)s to %(high)s."
        ),
    ),
    "positive": (
        _("The models showed the helpful behaviour in %(passed)s of %(n)s test conversations."),
        _(
            "The models showed the helpful behaviour in %(passed)s of %(n)s test "
            "conversations, from %(low)s to %(high)s."
        ),
    ),
}


@dataclass
class ModelFigure:
    pk: int
    name: str
    estimate: Estimate


@dataclass
class LanguageFigures:
    """One language's counts and each model's estimate, when a run spans several."""

    name: str
    passed: int
    n: int
    models: list[ModelFigure] = field(default_factory=list)


@dataclass
class Finding:
    polarity: str
    title: str | Promise
    sentence: str
    passed: int
    n: int
    models: list[ModelFigure] = field(default_factory=list)
    by_language: list[LanguageFigures] = field(default_factory=list)


@dataclass
class Findings:
    run: EvaluationRun
    n_models: int
    n_conversations: int
    findings: list[Finding]
    # The run's models are the offline demo model's stand-ins, not real models.
    offline: bool = False
    # "pooled across English and Spanish conversations" when the run spans several languages.
    pooled_note: str = ""

    @property
    def models(self) -> list[ModelFigure]:
        """Each model once (for links to its label), alphabetical."""
        seen: dict[int, ModelFigure] = {}
        for finding in self.findings:
            for m in finding.models:
                seen.setdefault(m.pk, m)
        return sorted(seen.values(), key=lambda m: m.name)


def _end(model: ModelFigure) -> str:
    """One end of the findings' range: the model's rate, name and how sure the rate is."""
    e = model.estimate
    words = percent_words(e)
    if not words:
        return f"{e.value * 100:.0f} % ({model.name})"
    return gettext("%(rate)s (%(model)s, %(words)s)") % {
        "rate": f"{e.value * 100:.0f} %",
        "model": model.name,
        "words": words,
    }


def _counts(rows: list[PassRateSummary], age: str) -> tuple[int, int]:
    picked = [r for r in rows if r.age_context == age]
    return sum(r.n_passed for r in picked), sum(r.n_conversations for r in picked)


def headline_findings() -> Findings | None:
    """Findings of the latest release's headline run; None when nothing is published. Two
    queries."""
    run = public_run_default()
    if run is None:
        return None
    every = list(
        PassRateSummary.objects.filter(run=run, level=SummaryLevel.OVERALL)
        .select_related("target")
        .order_by("target__name")
    )
    rows = [r for r in every if r.language == ""]
    languages = sorted({r.language for r in every} - {""})
    findings = []
    for polarity in ("negative", "positive"):
        mine = [r for r in rows if r.polarity == polarity]
        passed, n = _counts(mine, "all")
        if not n:
            continue
        title = POLARITY_WORDS[polarity]
        teen_passed, teen_n = _counts(mine, "teen")
        adult_passed, adult_n = _counts(mine, "adult")
        models = [
            ModelFigure(r.target_id, r.target.name, r.estimate)
            for r in mine
            if r.age_context == "all"
        ]
        ranked = sorted(
            (m for m in models if m.estimate.defined), key=lambda m: (m.estimate.value, m.name)
        )
        alone, with_range = FINDING_SENTENCES[polarity]
        if len(ranked) > 1:
            sentence = str(with_range) % {
                "passed": passed,
                "n": n,
                "low": _end(ranked[0]),
                "high": _end(ranked[-1]),
            }
        else:
            sentence = str(alone) % {"passed": passed, "n": n}
        if teen_n and adult_n:
            sentence += " " + gettext(
                "With teen personas: %(teen_passed)s of %(teen_n)s; with adult personas: "
                "%(adult_passed)s of %(adult_n)s."
            ) % {
                "teen_passed": teen_passed,
                "teen_n": teen_n,
                "adult_passed": adult_passed,
                "adult_n": adult_n,
            }
        by_language = []
        for language in languages:
            theirs = [r for r in every if r.polarity == polarity and r.language == language]
            lang_passed, lang_n = _counts(theirs, "all")
            figures = [
                ModelFigure(r.target_id, r.target.name, r.estimate)
                for r in theirs
                if r.age_context == "all"
            ]
            name = language_display_name(language)
            by_language.append(LanguageFigures(name, lang_passed, lang_n, figures))
        findings.append(Finding(polarity, title, sentence, passed, n, models, by_language))
    n_models = len({r.target_id for r in rows})
    total = sum(r.n_conversations for r in rows if r.age_context == "all")
    return Findings(
        run=run,
        n_models=n_models,
        n_conversations=total,
        findings=findings,
        offline=run_uses_offline_model(run),
        pooled_note=pooled_languages_note(languages),
    )
