"""The language switch of the public pages and the panel comparing two languages.

A run whose conversations span several languages has each language's figures stored beside
the pooled ones (`services.languages`); a page reads ``?lang=`` ("all" or one of the run's
languages; anything else falls back to "all", as an unknown ``?age=`` does), says that "all"
pools the languages, and shows the paired comparison the analysis keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.utils.translation import gettext as _

from core.languages import language_display_name, languages_pooled_note
from evaluations.models import EvaluationRun
from stats.estimates import Estimate

from .selectors import run_language_analysis, summary_languages
from .services.languages import pooled_languages_note

ALL = "all"


@dataclass(frozen=True)
class LanguageChoice:
    """The languages a page can switch between, the one shown, and what "all" means."""

    languages: list[str]
    current: str
    # Rubric results pool items (one conversation each), not conversations of a run.
    items: bool = False

    @property
    def summary_language(self) -> str:
        """The summary rows' language to read: blank for every language pooled."""
        return "" if self.current == ALL else self.current

    @property
    def switchable(self) -> bool:
        return len(self.languages) > 1

    @property
    def reader_lang(self) -> str:
        """What links carry from page to page (nothing when every language is shown)."""
        return "" if self.current == ALL else self.current

    @property
    def pooled_note(self) -> str:
        """ "pooled across English and Spanish conversations" on "all" when the run has
        several languages; blank otherwise."""
        if self.current != ALL:
            return ""
        if self.items:
            return languages_pooled_note(self.languages) if self.switchable else ""
        return pooled_languages_note(self.languages)

    @property
    def name(self) -> str:
        return language_display_name(self.current) if self.current != ALL else ""

    def links(self, query: dict[str, str]) -> list[tuple[str, str, str]]:
        """(value, its name, the page with it and the other parameters kept) per choice."""
        out = []
        for value in (ALL, *self.languages):
            params = {k: v for k, v in query.items() if k != "lang" and v not in ("", None)}
            if value != ALL:
                params["lang"] = value
            words = _("All languages") if value == ALL else language_display_name(value)
            out.append((value, words, "?" + urlencode(params)))
        return out


def language_choice(run: EvaluationRun, raw: str | None) -> LanguageChoice:
    """The run's languages (one query) and the reader's choice among them."""
    languages = summary_languages(run=run)
    current = raw if raw in languages else ALL
    return LanguageChoice(languages, current)


def rubric_language_choice(languages: list[str], raw: str | None) -> LanguageChoice:
    """The same choice over a rubric run's item languages (none to choose from with one)."""
    languages = languages if len(languages) > 1 else []
    return LanguageChoice(languages, raw if raw in languages else ALL, items=True)


@dataclass(frozen=True)
class GapRow:
    """One line of the comparison: whose difference, the estimate and what it says."""

    label: str
    polarity: str
    estimate: Estimate
    reading: str


@dataclass(frozen=True)
class GapPanel:
    language: str
    reference: str
    rows: list[GapRow] = field(default_factory=list)

    @property
    def title(self) -> str:
        return _("%(language)s versus %(reference)s on the same situations") % {
            "language": language_display_name(self.language),
            "reference": language_display_name(self.reference),
        }


def gap_reading(
    estimate: Estimate, language: str, reference: str, *, survives: bool = False
) -> str:
    """What a difference supports, and no more: a direction only when its interval excludes
    zero and it ``survives`` the release's false-discovery-rate control (its family counts
    the teen-adult tests and every language comparison)."""
    names = {
        "language": language_display_name(language),
        "reference": language_display_name(reference),
    }
    if not estimate.defined:
        return _("Not enough paired situations to compare.")
    if not estimate.has_interval or not estimate.excludes_zero:
        return _("No difference shown: the interval includes zero.")
    if not survives:
        return _(
            "No difference claimed: the interval excludes zero, but the difference does not "
            "survive the false-discovery-rate control over the release's comparisons."
        )
    if (estimate.value or 0.0) < 0:
        return _("Lower in %(language)s than in %(reference)s.") % names
    return _("Higher in %(language)s than in %(reference)s.") % names


def _row(label: str, polarity: str, data: dict[str, Any], comparison: dict, test: dict) -> GapRow:
    """``test``: the dict holding the difference's false-discovery-rate outcome (an
    analysis stored before the control has none, and claims no direction)."""
    estimate = Estimate.from_dict(data)
    reading = gap_reading(
        estimate,
        comparison["language"],
        comparison["reference"],
        survives=bool(test.get("fdr_discovery")),
    )
    return GapRow(label, polarity, estimate, reading)


def language_gap_panels(
    run: EvaluationRun, *, metric_version: int | None = None, stored: dict | None = None
) -> list[GapPanel]:
    """Per compared language, its difference from the reference: overall and per model
    (``metric_version`` None) or, for one metric, over its models and per model. One
    query, none when the caller has the analysis's ``languages`` (``stored``)."""
    analysis = run_language_analysis(run=run) if stored is None else stored
    panels = []
    for comparison in analysis.get("comparisons", []):
        rows: list[GapRow] = []
        if metric_version is None:
            tests = comparison.get("overall_tests", {})
            for polarity, data in comparison.get("overall", {}).items():
                test = tests.get(polarity, {})
                rows.append(_row(_("Every model"), polarity, data, comparison, test))
            for model in comparison.get("models", []):
                rows.append(
                    _row(model["target"], model["polarity"], model["difference"], comparison, model)
                )
        else:
            metric = next(
                (m for m in comparison.get("metrics", []) if m["metric_version"] == metric_version),
                None,
            )
            if metric is None:
                continue
            rows.append(
                _row(_("Every model"), metric["polarity"], metric["difference"], comparison, metric)
            )
            for model in metric["models"]:
                polarity = metric["polarity"]
                rows.append(_row(model["target"], polarity, model["difference"], comparison, model))
        panels.append(GapPanel(comparison["language"], comparison["reference"], rows))
    return panels


def language_comparisons_api(
    run: EvaluationRun, *, metric_version: int | None = None
) -> list[dict[str, Any]]:
    """The comparisons as the API gives them: overall and per model, or for one metric over
    its models and per model. One query."""
    out = []
    for comparison in run_language_analysis(run=run).get("comparisons", []):
        head = {key: comparison[key] for key in ("language", "reference", "method")}
        if metric_version is None:
            out.append(
                {
                    **head,
                    "overall": comparison.get("overall", {}),
                    "overall_tests": comparison.get("overall_tests", {}),
                    "models": comparison["models"],
                }
            )
            continue
        for metric in comparison.get("metrics", []):
            if metric["metric_version"] == metric_version:
                out.append(
                    {
                        **head,
                        "difference": metric["difference"],
                        "p_value": metric["p_value"],
                        "q_value": metric.get("q_value"),
                        "fdr_discovery": metric.get("fdr_discovery", False),
                        "models": metric["models"],
                    }
                )
    return out
