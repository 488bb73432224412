"""Results per language: which languages a run's conversations were in, the cells of one
language, and the paired comparison of two languages on the same situations.

A base situation keeps its base index in every language it was written or translated into
(`evaluations.models.Scenario`), so a metric's situation (base index, age) in Spanish is the
same situation as in English. The comparison pairs them: per model, the Spanish variant's pass
rate minus the English variant's, on each situation judged in both, with the paired test and
interval of the teen-adult gap (:func:`stats.age_gap.age_gap_test`, its two conditions here
the two languages). Situations judged in only one of the two languages have no counterpart:
they are left out of the difference and counted beside it.

Every difference the pages read as a direction (per polarity, per model, per metric, per
model on a metric) keeps its p-value (`language_tests` lists them) and is counted in the
release's one family of tests under false-discovery-rate control, with the teen-adult
differences (`teen_adult.teen_adult_summary`): a direction is claimed only for a difference
that survives it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
from django.utils.text import get_text_list
from django.utils.translation import gettext
from numpy.typing import NDArray

from core.languages import DEFAULT_LANGUAGE, language_display_name
from stats import age_gap
from stats.estimates import Estimate, Exclusion

from .cells import AGES, RunCells

# How the comparison is named in every estimate it publishes.
LANGUAGE_GAP_METHOD = (
    "paired difference over situations (the same base scenario and age in both languages, "
    "per model); per-model binomial variance plus a between-situation variance whose "
    "distribution is estimated from all groups (empirical Bayes); interval within [-1, 1]"
)
POLARITIES = ("positive", "negative")


def cell_languages(cells: RunCells) -> list[str]:
    """The languages (sorted tags) of the run's judged or failed conversations."""
    judged = {cells.languages[code] for code in np.unique(cells.language_codes).tolist()}
    return sorted(judged | set(cells.failed_language))


def cells_in_language(cells: RunCells, language: str) -> RunCells:
    """The cells (and failed rows) of one language, as a run of that language alone."""
    keep = (
        cells.language_codes == cells.languages.index(language)
        if language in cells.languages
        else np.zeros(cells.size, bool)
    )
    failed = [
        row for row, tag in zip(cells.failed, cells.failed_language, strict=True) if tag == language
    ]
    return replace(
        cells,
        target=cells.target[keep],
        version=cells.version[keep],
        base=cells.base[keep],
        age=cells.age[keep],
        n=cells.n[keep],
        passed=cells.passed[keep],
        failed=failed,
        failed_language=[language] * len(failed),
        languages=(language,),
        language=np.zeros(int(keep.sum()), np.int64),
    )


def language_scopes(cells: RunCells) -> list[tuple[str, RunCells]]:
    """The cells the summaries are written for: all of them under a blank language, then,
    when they span several languages, each language's own."""
    languages = cell_languages(cells)
    scopes = [("", cells)]
    if len(languages) > 1:
        scopes += [(tag, cells_in_language(cells, tag)) for tag in languages]
    return scopes


def pooled_languages_note(tags: Iterable[str]) -> str:
    """How a figure over conversations in several languages says so: "pooled across English
    and Spanish conversations"; blank for one language."""
    tags = sorted(set(tags))
    if len(tags) < 2:
        return ""
    names = get_text_list([language_display_name(tag) for tag in tags], gettext("and"))
    return gettext("pooled across %(languages)s conversations") % {"languages": names}


def reference_language(languages: Iterable[str]) -> str:
    """The language the others are compared with: the platform's default when the run has
    it (scenarios are written in it first), else the first tag."""
    languages = sorted(languages)
    return DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in languages else languages[0]


def _paired_test(
    cells: RunCells,
    rows: NDArray[np.int64],
    group: NDArray[np.int64],
    n_groups: int,
    condition: NDArray[np.int64],
    model: NDArray[np.int64],
) -> tuple[age_gap.AgeGapTest, list[tuple[int, int]]]:
    """The paired test of the ``rows`` of ``cells`` in ``n_groups`` groups: each group's
    situations (version, base, age) paired across the two conditions (0 the compared
    language, 1 the reference), per ``model``. Also, per group, the situations with only the
    compared language and those with only the reference (no counterpart)."""
    bases = int(cells.base.max(initial=0)) + 1
    situation_key = (cells.version[rows] * bases + cells.base[rows]) * len(AGES) + cells.age[rows]
    span = int(situation_key.max(initial=0)) + 1
    # Situations numbered within each group: the layout is [group, situation, condition, model].
    unique_keys, situation = np.unique(group * span + situation_key, return_inverse=True)
    group_start = np.searchsorted(unique_keys // span, np.arange(n_groups))
    within = situation.ravel() - group_start[group]
    width = int(within.max(initial=-1)) + 1
    models = int(model.max(initial=-1)) + 1
    shape = (n_groups, max(width, 1), 2, max(models, 1))
    passed, n = np.zeros(shape), np.zeros(shape)
    index = (group, within, condition, model)
    np.add.at(passed, index, cells.passed[rows])
    np.add.at(n, index, cells.n[rows])
    present = n.sum(axis=3) > 0  # [group, situation, condition]
    only = [
        (
            int((present[g, :, 0] & ~present[g, :, 1]).sum()),
            int((present[g, :, 1] & ~present[g, :, 0]).sum()),
        )
        for g in range(n_groups)
    ]
    return age_gap.age_gap_test(passed, n, method=LANGUAGE_GAP_METHOD), only


def _estimates(
    test: age_gap.AgeGapTest, only: list[tuple[int, int]], language: str, reference: str
) -> list[Estimate]:
    """The test's estimates, each with the situations it left out for want of a
    counterpart."""
    out = []
    for estimate, (only_compared, only_reference) in zip(test.estimates(), only, strict=True):
        out.append(
            estimate.with_exclusions(
                [
                    Exclusion(f"situations judged only in {language}", only_compared),
                    Exclusion(f"situations judged only in {reference}", only_reference),
                ]
            )
        )
    return out


def _comparison_rows(
    cells: RunCells, language: str, reference: str
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The cells of the two languages and each one's condition (0 compared, 1 reference)."""
    codes = cells.language_codes
    compared, ref = cells.languages.index(language), cells.languages.index(reference)
    rows = np.flatnonzero((codes == compared) | (codes == ref))
    return rows, (codes[rows] == ref).astype(np.int64)


def language_comparison(
    cells: RunCells, names: dict[int, str], keys: dict[int, str], *, language: str, reference: str
) -> dict[str, Any]:
    """``language`` minus ``reference`` pass rates, paired by situation: per polarity over
    every model and metric, per model and polarity, per metric (its models pooled, as the
    teen-adult gap), and per model on each metric. Every figure carries its interval, the
    situations paired and those left out."""
    rows, condition = _comparison_rows(cells, language, reference)
    targets, t_code = np.unique(cells.target[rows], return_inverse=True)
    t_code = t_code.ravel()
    versions, v_code = np.unique(cells.version[rows], return_inverse=True)
    v_code = v_code.ravel()
    polarity = np.array(
        [POLARITIES.index(cells.polarity.get(v, "positive")) for v in cells.version[rows].tolist()],
        np.int64,
    ).reshape(-1)
    zero = np.zeros(rows.size, np.int64)

    def run(group, n_groups, model):
        test, only = _paired_test(cells, rows, group, n_groups, condition, model)
        return _estimates(test, only, language, reference), [_finite(p) for p in test.p_value]

    overall, overall_p = run(polarity, 2, t_code)
    per_model, model_p = run(t_code * 2 + polarity, targets.size * 2, zero)
    per_metric, metric_p = run(v_code, versions.size, t_code)
    per_model_metric, model_metric_p = run(
        v_code * targets.size + t_code, versions.size * targets.size, zero
    )
    present = {(int(v), int(t)) for v, t in zip(v_code.tolist(), t_code.tolist(), strict=True)}
    polarity_of = {i: cells.polarity.get(int(v), "") for i, v in enumerate(versions.tolist())}
    return {
        "language": language,
        "reference": reference,
        "method": LANGUAGE_GAP_METHOD,
        "overall": {
            p: overall[i].as_dict()
            for i, p in enumerate(POLARITIES)
            if overall[i].n or overall[i].n_excluded
        },
        # Beside "overall" (whose values are estimates): each polarity's test.
        "overall_tests": {
            p: {"p_value": overall_p[i]}
            for i, p in enumerate(POLARITIES)
            if overall[i].n or overall[i].n_excluded
        },
        "models": [
            {
                "target": names.get(int(t), str(t)),
                "target_id": int(t),
                "polarity": p,
                "difference": per_model[i * 2 + k].as_dict(),
                "p_value": model_p[i * 2 + k],
            }
            for i, t in enumerate(targets.tolist())
            for k, p in enumerate(POLARITIES)
            if per_model[i * 2 + k].n or per_model[i * 2 + k].n_excluded
        ],
        "metrics": [
            {
                "metric_version": int(v),
                "metric": keys.get(int(v), str(v)),
                "polarity": polarity_of[i],
                "difference": per_metric[i].as_dict(),
                "p_value": metric_p[i],
                "models": [
                    {
                        "target": names.get(int(t), str(t)),
                        "target_id": int(t),
                        "difference": per_model_metric[i * targets.size + j].as_dict(),
                        "p_value": model_metric_p[i * targets.size + j],
                    }
                    for j, t in enumerate(targets.tolist())
                    if (i, j) in present
                ],
            }
            for i, v in enumerate(versions.tolist())
        ],
    }


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def language_tests(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The tests of a `languages_summary`, each the dict holding its ``p_value`` (where the
    false-discovery-rate control writes ``q_value`` and ``fdr_discovery``): per polarity,
    per model, per metric and per model on each metric, for every compared language."""
    tests: list[dict[str, Any]] = []
    for comparison in summary.get("comparisons", []):
        tests += comparison.get("overall_tests", {}).values()
        tests += comparison.get("models", [])
        for metric in comparison.get("metrics", []):
            tests += [metric, *metric.get("models", [])]
    return tests


def languages_summary(
    cells: RunCells, names: dict[int, str], keys: dict[int, str]
) -> dict[str, Any]:
    """What the analysis keeps about languages: the run's languages and, when there are
    several, each one compared with the reference language."""
    languages = cell_languages(cells)
    if len(languages) < 2:
        return {"languages": languages, "reference": "", "comparisons": []}
    reference = reference_language(languages)
    judged = {cells.languages[c] for c in np.unique(cells.language_codes).tolist()}
    return {
        "languages": languages,
        "reference": reference,
        "comparisons": [
            language_comparison(cells, names, keys, language=tag, reference=reference)
            for tag in languages
            if tag != reference and tag in judged and reference in judged
        ],
    }
