"""Read side of the public pages: Explore's wheel and a metric's results (a conversation's
transcript: `public_conversations`). Each function runs a fixed number of queries whatever the
size of the release (tests assert it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.db.models import Count, Prefetch
from django.urls import reverse
from django.utils.translation import gettext_noop

from evaluations.models import Conversation, EvaluationRun, Scenario
from llm.models import ModelConfiguration
from metrics_registry.models import Area, Metric, MetricVersion, ReleaseItem, Subarea
from metrics_registry.selectors import metric_list
from metrics_registry.text_selectors import metric_version_texts
from stats.estimates import Estimate, Exclusion

from .charts import Node
from .models import PassRateSummary, SummaryLevel
from .selectors import public_conversations, summary_estimates
from .services.cells import failed_conversations

AGES = ("all", "teen", "adult")
# Shown where the run has no conversations for a group (e.g. a subarea without metrics).
UNTESTED = Estimate.insufficient(n=0, reason=gettext_noop("nothing tested here"))
POLARITIES = ("positive", "negative")


def metric_url(key: str, run: EvaluationRun) -> str:
    return reverse("results:metric", args=[key]) + f"?run={run.pk}"


@dataclass
class WheelRow:
    """A line of the table beside the wheel (one per area/subarea, one estimate per model)."""

    level: str
    label: str
    href: str
    estimates: list[Estimate | None]
    slug: str = ""
    # A metric's name shown in another language than the page's: its tag, for `lang`.
    lang: str = ""


@dataclass
class Wheel:
    target: ModelConfiguration
    nodes: list[Node]
    rows: list[WheelRow] = field(default_factory=list)


@dataclass(frozen=True)
class Overlap:
    """A model whose area (or subarea) counts add up to more conversations than were judged,
    because a metric filed under several subareas counts in each."""

    target: ModelConfiguration
    judged: int
    in_areas: int
    in_subareas: int


@dataclass
class ExploreData:
    wheels: list[Wheel]
    rows: list[WheelRow]
    subarea: Subarea | None
    metric_rows: list[WheelRow]
    overlaps: list[Overlap] = field(default_factory=list)
    # Tags of the metric names shown in another language than the reader's (for the note).
    fallback_languages: list[str] = field(default_factory=list)


def _overlaps(
    targets: list[ModelConfiguration],
    rows: list[WheelRow],
    overall: dict,
    polarity: str,
    age: str,
) -> list[Overlap]:
    found = []
    for i, target in enumerate(targets):
        judged = overall.get((target.pk, polarity, None, age))
        if judged is None:
            continue
        sums = {
            level: sum(row.estimates[i].n for row in rows if row.level == level)
            for level in ("area", "subarea")
        }
        if max(sums.values()) > judged.n:
            found.append(Overlap(target, judged.n, sums["area"], sums["subarea"]))
    return found


def _areas() -> list[Area]:
    return list(
        Area.objects.prefetch_related(
            Prefetch("subareas", queryset=Subarea.objects.order_by("position", "name"))
        ).order_by("position", "name")
    )


def explore(
    *,
    run: EvaluationRun,
    targets: list[ModelConfiguration],
    age: str,
    polarity: str,
    subarea_slug: str = "",
    base_query: dict[str, str],
    language: str = "",
) -> ExploreData:
    """Wheels (one per model compared) and the table of the same figures, over every
    language or one (``language``). Six queries; one more for the names of a selected
    subarea's metrics when the page is read in another language than theirs."""
    areas = _areas()
    ids = [t.pk for t in targets]
    common = {
        "run": run,
        "ages": (age,),
        "polarity": polarity,
        "target_ids": ids,
        "language": language,
    }
    area_est = summary_estimates(level=SummaryLevel.AREA, **common)
    sub_est = summary_estimates(level=SummaryLevel.SUBAREA, **common)
    overall_est = summary_estimates(level=SummaryLevel.OVERALL, **common)
    selected = next((s for a in areas for s in a.subareas.all() if s.slug == subarea_slug), None)
    metric_rows: list[WheelRow] = []
    metric_nodes: dict[int, list[Node]] = {t.pk: [] for t in targets}
    if selected is not None:
        summaries = (
            PassRateSummary.objects.filter(
                run=run,
                level=SummaryLevel.METRIC,
                age_context=age,
                language=language,
                polarity=polarity,
                target_id__in=ids,
                metric_version__subareas=selected,
            )
            .select_related("metric_version__metric")
            .order_by("metric_version__metric__key")
        )
        by_version: dict[int, dict[int, Estimate]] = {}
        versions: dict[int, MetricVersion] = {}
        for row in summaries:
            versions[row.metric_version_id] = row.metric_version
            by_version.setdefault(row.metric_version_id, {})[row.target_id] = row.estimate
        shown = metric_version_texts(versions.values())
        for vid, version in versions.items():
            href = metric_url(version.metric.key, run)
            ests = [by_version[vid].get(t.pk) for t in targets]
            name = shown[vid].name
            metric_rows.append(
                WheelRow(
                    "metric",
                    f"{version.metric.key} · {name}",
                    href,
                    ests,
                    version.metric.key,
                    lang=shown[vid].language if shown[vid].is_fallback else "",
                )
            )
            for t, e in zip(targets, ests, strict=True):
                metric_nodes[t.pk].append(Node(version.metric.key, name, e, href))

    def drill(slug: str) -> str:
        return "?" + urlencode({**base_query, "subarea": slug})

    def area_href(area: Area) -> str:
        return reverse("results:metric-list") + "?" + urlencode({"area": area.slug, "run": run.pk})

    rows: list[WheelRow] = []
    for area in areas:
        rows.append(
            WheelRow(
                "area",
                area.name,
                area_href(area),
                [area_est.get((t.pk, polarity, area.pk, age), UNTESTED) for t in targets],
                area.slug,
            )
        )
        for sub in area.subareas.all():
            rows.append(
                WheelRow(
                    "subarea",
                    sub.name,
                    drill(sub.slug),
                    [sub_est.get((t.pk, polarity, sub.pk, age), UNTESTED) for t in targets],
                    sub.slug,
                )
            )
    wheels = []
    for t in targets:
        nodes = []
        for area in areas:
            children = [
                Node(
                    s.slug,
                    s.name,
                    sub_est.get((t.pk, polarity, s.pk, age), UNTESTED),
                    drill(s.slug),
                    metric_nodes[t.pk] if selected is not None and s.pk == selected.pk else [],
                )
                for s in area.subareas.all()
            ]
            nodes.append(
                Node(
                    area.slug,
                    area.name,
                    area_est.get((t.pk, polarity, area.pk, age), UNTESTED),
                    area_href(area),
                    children,
                )
            )
        wheels.append(Wheel(target=t, nodes=nodes))
    return ExploreData(
        wheels=wheels,
        rows=rows,
        subarea=selected,
        metric_rows=metric_rows,
        overlaps=_overlaps(targets, rows, overall_est, polarity, age),
        fallback_languages=list(dict.fromkeys(row.lang for row in metric_rows if row.lang)),
    )


def explore_cells(
    *,
    run: EvaluationRun,
    target: ModelConfiguration,
    age: str,
    polarity: str,
    language: str = "",
) -> list[dict]:
    """One model's wheel as a flat list for the API: every area, then every subarea.

    The same figures as the Explore page's table (`explore`), in the API's order.
    """
    rows = explore(
        run=run, targets=[target], age=age, polarity=polarity, base_query={}, language=language
    ).rows
    return [
        {"level": row.level, "slug": row.slug, "name": row.label, "estimate": row.estimates[0]}
        for level in ("area", "subarea")
        for row in rows
        if row.level == level
    ]


# --- metric page -----------------------------------------------------------------------------


def public_metric(key: str) -> Metric | None:
    """A metric visitors may read (not a draft), by key."""
    return metric_list(user=None).filter(key=key).first()


@dataclass
class ModelResult:
    target: ModelConfiguration
    all: Estimate | None
    teen: Estimate | None
    adult: Estimate | None


@dataclass
class ScenarioBlock:
    scenario: Scenario
    conversations: list[Conversation]


def run_version_of(run: EvaluationRun, metric: Metric) -> MetricVersion | None:
    """The version of `metric` the run evaluated (its release's item)."""
    item = (
        ReleaseItem.objects.filter(release_id=run.release_id, metric=metric)
        .select_related("metric_version__label_category")
        .first()
    )
    return item.metric_version if item else None


def metric_results(
    *,
    run: EvaluationRun,
    version: MetricVersion,
    targets: list[ModelConfiguration],
    language: str = "",
) -> list[ModelResult]:
    est = summary_estimates(
        run=run,
        level=SummaryLevel.METRIC,
        ages=AGES,
        key_ids=[version.pk],
        language=language,
    )
    pol = version.polarity
    loaded: list[dict[tuple[int, str, str], int]] = []

    def cell(target: ModelConfiguration, age: str) -> Estimate | None:
        found = est.get((target.pk, pol, version.pk, age))
        if found is not None:
            return found
        # No judged conversation, so no summary row: still say what was left out and why
        # (read once, only when a cell lacks its row).
        if not loaded:
            loaded.append(_failures_without_rate(run=run, version=version))
        reasons: dict[str, int] = {}
        for (t, a, reason), count in loaded[0].items():
            if t == target.pk and (age == "all" or a == age):
                reasons[reason] = reasons.get(reason, 0) + count
        if not reasons:
            return None
        excluded = [Exclusion(reason, count) for reason, count in sorted(reasons.items())]
        return Estimate.insufficient(
            n=0, reason=gettext_noop("no judged conversations"), excluded=excluded
        )

    return [ModelResult(t, cell(t, "all"), cell(t, "teen"), cell(t, "adult")) for t in targets]


def _failures_without_rate(
    *, run: EvaluationRun, version: MetricVersion
) -> dict[tuple[int, str, str], int]:
    """(target, age context, reason) -> failed conversations of the version in the run."""
    rows = (
        failed_conversations(run)
        .filter(scenario__metric_version=version)
        .values_list("target_id", "scenario__age_context", "failure")
        .annotate(count=Count("id"))
        .order_by()
    )
    return {(t, age, reason): count for t, age, reason, count in rows}


def metric_scenarios(*, run: EvaluationRun, version: MetricVersion) -> list[ScenarioBlock]:
    """The version's scenarios in this run, each with its conversations (one per model)."""
    conversations = (
        public_conversations()
        .filter(run=run, scenario__metric_version=version)
        .select_related("scenario", "target")
        .order_by("scenario__base_index", "-scenario__age_context", "target__name", "replicate")
    )
    blocks: dict[int, ScenarioBlock] = {}
    for c in conversations:
        blocks.setdefault(c.scenario_id, ScenarioBlock(c.scenario, [])).conversations.append(c)
    return list(blocks.values())
