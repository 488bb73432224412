"""Forest plots of the methodology page: the same figures as its tables, drawn."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.utils.translation import gettext

from stats.estimates import Estimate

from .chart_text import shared_prefix
from .charts import ForestRow, forest_svg
from .models import PassRateSummary

MAX_ROWS = 25


def _estimate(value, ci, n: int, unit: str) -> Estimate:
    """The figure as stored in the run's analysis: an Estimate's dict, or a bare number."""
    if isinstance(value, Mapping):
        return Estimate.from_dict(value)
    low, high = (ci or [None, None])[:2]
    if value is None:
        return Estimate.insufficient(n=n, unit=unit)  # type: ignore[arg-type]
    return Estimate(value=value, low=low, high=high, n=n, unit=unit)  # type: ignore[arg-type]


def methodology_plots(
    *, overall: Iterable[PassRateSummary], teen_adult: Mapping[str, Any], judge: Mapping[str, Any]
) -> list[dict[str, str]]:
    """(id, title, svg) of each plot: pass rate per model per polarity, teen − adult per
    metric, judge unanimity per metric."""
    plots = []
    rows = list(overall)
    for polarity in ("positive", "negative"):
        forest = [ForestRow(r.target.name, r.estimate) for r in rows if r.polarity == polarity]
        if forest:
            title = {
                "positive": gettext(
                    "Pass rate per model, positive metrics, teens and adults together"
                ),
                "negative": gettext(
                    "Pass rate per model, negative metrics, teens and adults together"
                ),
            }[polarity]
            plots.append(
                {
                    "id": f"plot-overall-{polarity}",
                    "title": title,
                    "svg": forest_svg(forest, title=title),
                }
            )
    differences = [
        ForestRow(
            f"{d['metric']} ({d['polarity']})",
            _estimate(d["difference"], d.get("ci"), d["n_teen"] + d["n_adult"], "difference"),
        )
        for d in (teen_adult.get("largest") or [])[:MAX_ROWS]
    ]
    if differences:
        title = gettext("Teen minus adult pass rate per metric (percentage points), largest first")
        plots.append(
            {
                "id": "plot-teen-adult",
                "title": title,
                "svg": forest_svg(differences, title=title, unit="difference"),
            }
        )
    per_metric = [
        ForestRow(
            str(m["metric"]),
            _estimate(
                m.get("unanimity"), m.get("unanimity_ci"), m.get("n_conversations", 0), "proportion"
            ),
        )
        for m in (judge.get("per_metric") or [])[:MAX_ROWS]
    ]
    if per_metric:
        title = gettext(
            "Judge unanimity per metric (share of conversations where all readings agree)"
        )
        plots.append(
            {"id": "plot-judge", "title": title, "svg": forest_svg(per_metric, title=title)}
        )
    return plots


def _difference_title(polarity: str, prefix: str) -> str:
    """The title of a polarity's model-difference plot, naming the models' shared prefix."""
    if polarity == "positive":
        if prefix:
            return gettext(
                "Difference of pass rates between models, positive metrics (points); every "
                "model's name begins “%(prefix)s”"
            ) % {"prefix": prefix}
        return gettext("Difference of pass rates between models, positive metrics (points)")
    if prefix:
        return gettext(
            "Difference of pass rates between models, negative metrics (points); every model's "
            "name begins “%(prefix)s”"
        ) % {"prefix": prefix}
    return gettext("Difference of pass rates between models, negative metrics (points)")


def model_difference_plots(polarities: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per polarity: every pair of models' paired difference with its simultaneous interval,
    as a forest plot (id, title, svg) and the rows of its table."""
    out = []
    for polarity, data in polarities.items():
        pairs = (data or {}).get("differences") or []
        if not pairs:
            continue
        rows = [
            {"a": d["a"], "b": d["b"], "estimate": Estimate.from_dict(d["estimate"])} for d in pairs
        ]
        # Names that all begin alike ("Offline target: …") would leave every pair the same
        # once the label column is full: the rows name what differs, the title what is shared.
        prefix = shared_prefix([r[side] for r in rows for side in ("a", "b")])
        title = _difference_title(polarity, prefix.strip())
        forest = [
            ForestRow(f"{r['a'][len(prefix) :]} − {r['b'][len(prefix) :]}", r["estimate"])
            for r in rows
        ]
        out.append(
            {
                "id": f"plot-differences-{polarity}",
                "polarity": polarity,
                "title": title,
                "svg": forest_svg(forest, title=title, unit="difference"),
                "rows": rows,
                "n_clusters": rows[0]["estimate"].n_clusters,
            }
        )
    return out
