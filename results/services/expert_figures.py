"""The expert figures of a release, computed live for staff and frozen when it is published.

What experts said about the release's material, each figure an ``Estimate`` (value, interval,
n, what was left out):

* scenarios: ratings of "good" and "very good" and the two together, and how much of the
  release's scenario suite experts rated at all (a count over the whole suite, not a sample);
* conversations of the release's runs: rated realistic, under significant or extreme pressure
  (each and together), and realistic while under such pressure;
* the judge: experts who saw the judge's verdict agreeing, disagreeing or unsure; the blind
  external panel's per-conversation majority against the judge (agreement, Cohen's kappa),
  the panel's own agreement (Krippendorff's alpha), both also per metric; and the share of
  panel ratings that found the metric's examples adequate.

Each run of the release is frozen with it too: its blind experts against the judge and its
endorsement (`frozen_figures` reads them back for the methodology page and the API). A release
frozen with no rating at all answers its publisher with a warning.

Every interval resamples base scenarios (a situation with its teen and adult forms and every
model's conversation of it): ratings of one situation are not independent. Publication freezes
the figures in `ReleaseExpertFigures`; the public page reads that row and never live ratings.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

import stats as statistics
from evaluations.models import Conversation, EvaluationRun, Scenario
from review.kinds import kinds_with
from review.kinds.questions import CONVERSATION_PRESSURE, SCENARIO_QUALITY
from review.selectors import current_ratings_of
from stats.estimates import Estimate, Exclusion

from ..models import ReleaseExpertFigures
from .reliability import expert_agreement, expert_verdict_rows

# The layout of the stored JSON; a page meeting another layout says it cannot read it.
FIGURES_LAYOUT = 1
RESAMPLES = 2_000
# Per metric a release may have hundreds of rows, each with its own bootstrap.
PER_METRIC_RESAMPLES = 500
OVER = "base scenarios"
NO_RATINGS = gettext_noop("no expert ratings yet")
# Lazy: shown to the maintainer who publishes, in their language (`.format` evaluates it).
NO_RATINGS_WARNING = gettext_lazy(
    "Release {version} was published with no expert ratings of its scenarios or of its runs' "
    "conversations: its expert figures (scenario quality, realism and pressure, the judge "
    "against blind experts) are frozen at n = 0, and its methodology page and API say so for "
    "good. Have experts rate them (Workspace → Rating queues), then publish a new release to "
    "freeze their figures."
)
CENSUS = "a count over the release's whole scenario suite, not a sample: no interval"

# Choices of `SCENARIO_QUALITY` and `CONVERSATION_PRESSURE` counted together.
GOOD = ("good", "very_good")
PRESSED = ("significant", "extreme")


# The methodology page lists the per-metric figures itself up to this many metrics, and links
# to the release's per-metric page beyond: a release of 809 metrics made it a page of 1 MB.
INLINE_PER_METRIC = 50


def _none(*, unit: str = "proportion", reason: str = NO_RATINGS) -> dict[str, Any]:
    """A figure with nothing behind it: n = 0 and the reason, never a number."""
    return Estimate.insufficient(n=0, unit=unit, reason=reason).as_dict()


def _share(hits: list[bool], clusters: list[str], resamples: int = RESAMPLES) -> dict[str, Any]:
    """Share of true values, resampling base scenarios; an empty list says so with n = 0."""
    if not hits:
        return _none()
    return statistics.proportion_estimate(
        np.array(hits, dtype=np.float64), np.array(clusters), over=OVER, n_resamples=resamples
    ).as_dict()


def _answered(rows: list[tuple], question: str, values) -> list[tuple]:
    return [row for row in rows if row[3].get(question) in values]


def _scenario_suite(version_ids) -> dict[int, tuple[str, str]]:
    """The release's scenarios: id → (base-scenario cluster, language)."""
    return {
        pk: (f"{version}:{base}", language)
        for pk, version, base, language in Scenario.objects.active()
        .expanded()
        .filter(metric_version_id__in=version_ids)
        .values_list("pk", "metric_version_id", "base_index", "language")
    }


def _scenario_ratings(suite: dict[int, tuple[str, str]]) -> list[tuple]:
    """Current quality ratings of the suite's scenarios."""
    return [
        row
        for row in current_ratings_of(
            kinds=kinds_with("release_figure", "scenarios"), object_ids=list(suite)
        )
        if row[3].get("quality") in SCENARIO_QUALITY.values
    ]


def _scenario_figures(
    suite_of: dict[int, tuple[str, str]], ratings: list[tuple], language: str = ""
) -> dict[str, Any]:
    """Over the whole suite, or only its scenarios in `language`."""
    suite = {
        pk: cluster for pk, (cluster, tag) in suite_of.items() if not language or tag == language
    }
    rows = [row for row in ratings if row[1] in suite]
    clusters = [suite[row[1]] for row in rows]
    quality = [row[3]["quality"] for row in rows]
    rated = len({row[1] for row in rows})
    coverage = Estimate(
        value=rated / len(suite) if suite else None,
        n=len(suite),
        unit="proportion",
        method=CENSUS,
        reason="" if suite else gettext_noop("the release has no scenarios"),
    ).as_dict()
    return {
        "n_ratings": len(rows),
        "n_raters": len({row[2] for row in rows}),
        "n_rated": rated,
        "n_suite": len(suite),
        "suite_rated": coverage,
        "good": _share([q == "good" for q in quality], clusters),
        "very_good": _share([q == "very_good" for q in quality], clusters),
        "good_or_very_good": _share([q in GOOD for q in quality], clusters),
    }


def _conversation_info(release) -> dict[int, dict[str, Any]]:
    rows = Conversation.objects.filter(run__release=release).values_list(
        "pk",
        "verdict_present",
        "scenario__metric_version_id",
        "scenario__base_index",
        "scenario__metric_version__metric__key",
        "scenario__language",
    )
    return {
        pk: {"judge": judge, "cluster": f"{version}:{base}", "metric": key, "language": language}
        for pk, judge, version, base, key, language in rows
    }


def _realism_figures(rows: list[tuple], info: dict) -> dict[str, Any]:
    realistic = _answered(rows, "realistic", ("yes", "no"))
    pressure = _answered(rows, "pressure", CONVERSATION_PRESSURE.values)
    both = [r for r in realistic if r[3].get("pressure") in CONVERSATION_PRESSURE.values]

    def cl(subset):
        return [info[r[1]]["cluster"] for r in subset]

    return {
        "n_ratings": len(rows),
        "n_raters": len({r[2] for r in rows}),
        "n_conversations": len({r[1] for r in rows}),
        "realistic": _share([r[3]["realistic"] == "yes" for r in realistic], cl(realistic)),
        "significant": _share([r[3]["pressure"] == "significant" for r in pressure], cl(pressure)),
        "extreme": _share([r[3]["pressure"] == "extreme" for r in pressure], cl(pressure)),
        "significant_or_extreme": _share(
            [r[3]["pressure"] in PRESSED for r in pressure], cl(pressure)
        ),
        "realistic_and_pressed": _share(
            [r[3]["realistic"] == "yes" and r[3]["pressure"] in PRESSED for r in both], cl(both)
        ),
    }


def _endorsement_figures(rows: list[tuple], info: dict) -> dict[str, Any]:
    """Experts who saw the judge's verdict: do they agree with it?"""
    answered = _answered(rows, "agreement", ("agree", "disagree", "unsure"))
    clusters = [info[r[1]]["cluster"] for r in answered]
    answers = [r[3]["agreement"] for r in answered]
    return {
        "n_ratings": len(answered),
        "n_raters": len({r[2] for r in answered}),
        "n_conversations": len({r[1] for r in answered}),
        **{name: _share([a == name for a in answers], clusters) for name in ("agree", "disagree")},
        "unsure": _share([a == "unsure" for a in answers], clusters),
    }


def _panel_cell(votes: dict[int, dict[int, bool]], info: dict, resamples: int) -> dict[str, Any]:
    """Majority against the judge and the panel's own agreement over ``votes[conv][rater]``."""
    options = {"over": OVER, "n_resamples": resamples}
    majority: dict[int, bool] = {}
    ties = unjudged = 0
    for conversation, by_rater in votes.items():
        yes = sum(by_rater.values())
        if info[conversation]["judge"] is None:
            unjudged += 1
        elif yes * 2 == len(by_rater):
            ties += 1
        else:
            majority[conversation] = yes * 2 > len(by_rater)
    excluded = [
        Exclusion(gettext_noop("experts tied"), ties),
        Exclusion(gettext_noop("no judge verdict"), unjudged),
    ]
    excluded = [e for e in excluded if e.count]
    ids = sorted(majority)
    if ids:
        expert = np.array([majority[c] for c in ids], dtype=np.int64)
        judge = np.array([info[c]["judge"] for c in ids], dtype=np.int64)
        bases = np.array([info[c]["cluster"] for c in ids])
        agreement = statistics.proportion_estimate(
            (expert == judge).astype(np.float64), bases, excluded=excluded, **options
        ).as_dict()
        kappa = statistics.cohen_estimate(
            expert, judge, bases, excluded=excluded, **options
        ).as_dict()
    else:
        agreement = _none(reason=NO_RATINGS if not votes else "no conversation with a majority")
        kappa = _none(unit="coefficient", reason=agreement["reason"])
    conversations = sorted(votes)
    raters = sorted({r for by_rater in votes.values() for r in by_rater})
    alpha = _none(unit="coefficient", reason=NO_RATINGS if not votes else "fewer than two raters")
    if len(raters) >= 2:
        data = np.full((len(raters), len(conversations)), np.nan)
        column = {r: i for i, r in enumerate(raters)}
        for j, conversation in enumerate(conversations):
            for rater, present in votes[conversation].items():
                data[column[rater], j] = float(present)
        clusters = np.array([info[c]["cluster"] for c in conversations])
        alpha = statistics.krippendorff_estimate(data, "nominal", clusters, **options).as_dict()
    return {
        "n_conversations": len(votes),
        "majority_agreement": agreement,
        "cohen_kappa": kappa,
        "krippendorff_alpha": alpha,
    }


def _panel_figures(rows: list[tuple], info: dict, *, per_metric: bool = True) -> dict[str, Any]:
    """The blind external panel: its verdicts against the judge's, overall and per metric."""
    votes: dict[int, dict[int, bool]] = defaultdict(dict)
    for _, conversation, rater, answers in rows:
        if answers.get("verdict") in ("present", "absent"):
            votes[conversation][rater] = answers["verdict"] == "present"
    adequate = _answered(rows, "examples_adequate", ("yes", "no"))
    by_metric: dict[str, dict[int, dict[int, bool]]] = defaultdict(dict)
    for conversation, by_rater in votes.items():
        by_metric[info[conversation]["metric"]][conversation] = by_rater
    adequate_by_metric: dict[str, list[tuple]] = defaultdict(list)
    for row in adequate:
        adequate_by_metric[info[row[1]]["metric"]].append(row)

    def adequacy(subset: list[tuple], resamples: int = RESAMPLES) -> dict[str, Any]:
        return _share(
            [r[3]["examples_adequate"] == "yes" for r in subset],
            [info[r[1]]["cluster"] for r in subset],
            resamples,
        )

    metrics = [
        {
            "key": key,
            **_panel_cell(by_metric.get(key, {}), info, PER_METRIC_RESAMPLES),
            "examples_adequate": adequacy(adequate_by_metric.get(key, []), PER_METRIC_RESAMPLES),
        }
        for key in (sorted(set(by_metric) | set(adequate_by_metric)) if per_metric else ())
    ]
    return {
        "n_ratings": len(rows),
        "n_raters": len({r[2] for r in rows}),
        **_panel_cell(votes, info, RESAMPLES),
        "examples_adequate": adequacy(adequate),
        "per_metric": metrics,
    }


# The release's expert figures over ratings of its runs' conversations, by part.
CONVERSATION_PARTS = {
    "conversations": _realism_figures,
    "endorsement": _endorsement_figures,
    "panel": _panel_figures,
}


def release_expert_figures_live(release) -> dict[str, Any]:
    """The release's expert figures from the ratings as they stand now (JSON-ready)."""
    version_ids = list(release.items.values_list("metric_version_id", flat=True))
    suite = _scenario_suite(version_ids)
    scenario_ratings = _scenario_ratings(suite)
    info = _conversation_info(release)
    # Each kind's adapter names the part its ratings make (`KindAdapter.release_figure`).
    part_of = {k: part for part in CONVERSATION_PARTS for k in kinds_with("release_figure", part)}
    by_part: dict[str, list[tuple]] = defaultdict(list)
    for row in current_ratings_of(kinds=list(part_of), object_ids=list(info)):
        by_part[part_of[row[0]]].append(row)
    figures = {
        "layout": FIGURES_LAYOUT,
        "computed_at": timezone.now().isoformat(),
        "scenarios": _scenario_figures(suite, scenario_ratings),
        **{part: compute(by_part[part], info) for part, compute in CONVERSATION_PARTS.items()},
    }
    figures["n_ratings"] = sum(figures[part]["n_ratings"] for part in FIGURE_PARTS)
    figures["per_language"] = _per_language(suite, scenario_ratings, info, by_part)
    return figures


FIGURE_PARTS = ("scenarios", "conversations", "endorsement", "panel")


def _per_language(
    suite: dict, scenario_ratings: list[tuple], info: dict, by_part: dict[str, list[tuple]]
) -> list[dict[str, Any]]:
    """Each language's own figures when the rated scenarios and conversations span more than
    one (empty otherwise): experts who read Spanish agreeing says nothing of those who read
    English, so the figures above, which pool them, name the languages they pool."""
    rated = {suite[row[1]][1] for row in scenario_ratings}
    rated |= {info[row[1]]["language"] for rows in by_part.values() for row in rows}
    if len(rated) < 2:
        return []
    out = []
    for language in sorted(rated):
        cell: dict[str, Any] = {
            "language": language,
            "scenarios": _scenario_figures(suite, scenario_ratings, language),
        }
        for part, compute in CONVERSATION_PARTS.items():
            rows = [r for r in by_part[part] if info[r[1]]["language"] == language]
            # The panel's per-metric table too: the public per-metric page has a language
            # switch (`views.expert_figures`), and each metric's figures stand per language.
            cell[part] = compute(rows, info)
        cell["n_ratings"] = sum(cell[part]["n_ratings"] for part in FIGURE_PARTS)
        out.append(cell)
    return out


def release_run_validity(release) -> dict[str, dict[str, Any]]:
    """Each run's own validity figures (blind experts against the judge, and endorsement with
    the judge visible) as they stand now, keyed by run id, frozen with the release so the
    methodology page's run section cites what the release page cites."""
    return {
        str(run.pk): {
            "experts": expert_agreement(run, rows["blind"], n_resamples=RESAMPLES),
            "endorsement": expert_agreement(run, rows["judge_visible"], n_resamples=RESAMPLES),
        }
        for run in EvaluationRun.objects.filter(release=release).order_by("pk")
        for rows in [expert_verdict_rows(run)]
    }


def release_expert_figures_freeze(*, release) -> list[str]:
    """Store the release's expert figures as they are now (called as it is published).

    Written once: a release published again (it cannot be) would keep its first copy. Answers
    with a warning for the maintainer when no expert had rated anything of the release: every
    expert figure it publishes reads n = 0 for good, and only a later release can fill them.
    """
    if ReleaseExpertFigures.objects.filter(release=release).exists():
        return []
    figures = release_expert_figures_live(release)
    figures["runs"] = release_run_validity(release)
    ReleaseExpertFigures.objects.create(release=release, frozen_at=timezone.now(), figures=figures)
    if figures["n_ratings"] == 0:
        return [NO_RATINGS_WARNING.format(version=release.version)]
    return []


def release_expert_figures_frozen(release_id: int | None) -> dict[str, Any] | None:
    """The frozen figures of a release (one query), or None when none were frozen (a release
    published before figures were frozen, or not yet published)."""
    if release_id is None:
        return None
    row = (
        ReleaseExpertFigures.objects.filter(release_id=release_id)
        .values_list("frozen_at", "figures")
        .first()
    )
    if row is None:
        return None
    frozen_at, figures = row
    if figures.get("layout") != FIGURES_LAYOUT:
        return None
    return {**figures, "frozen_at": frozen_at}
