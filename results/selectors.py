"""Read side of the results app: which run a public page shows, and its precomputed rows."""

from __future__ import annotations

from django.db.models import Prefetch, Q, QuerySet

from core.ids import identifier_parse
from core.pagecache import latest
from evaluations.models import Conversation, EvaluationRun, Judgment, RunStatus, Scenario
from evaluations.visibility import conversations_public
from llm.models import ModelConfiguration, Provider
from metrics_registry.models import MetricVersion, ReleaseStatus
from metrics_registry.text_selectors import metric_version_texts
from review.blindness import blind_held_scenarios
from stats.estimates import Estimate

from .models import AnchorStudy, PassRateSummary, RunAnalysis, SummaryLevel

# Within a release: the run a maintainer marked as headline, else the most complete one, and
# among equals the one made official first, so a later, smaller run never takes its place.
RELEASE_RUN_ORDER = ("-is_headline", "-conversations_completed", "pk")
PUBLIC_RUN_ORDER = ("-release__major", "-release__minor", "-release__patch", *RELEASE_RUN_ORDER)


def _summarised_runs(*, with_analysis: bool) -> QuerySet[EvaluationRun]:
    runs = EvaluationRun.objects.filter(analysis__isnull=False).select_related(
        "release",
        "analysis",
        "judge",
        "simulator",
        # Every page and payload of the run says where its transcripts came from.
        "transcript_import__imported_by",
    )
    if not with_analysis:
        runs = runs.defer("analysis__reliability", "analysis__robustness")
    return runs


def public_runs(*, with_analysis: bool = False) -> QuerySet[EvaluationRun]:
    """Official, completed runs of published releases whose summaries exist: newest release
    first, and within a release its headline run first (`RELEASE_RUN_ORDER`).

    Only a maintainer's designation makes a run public (`evaluations.services.official`), so a
    later test run never replaces what visitors see. The analysis JSON (large at scale) is
    loaded only when asked for: most pages need just its refresh time.
    """
    return (
        _summarised_runs(with_analysis=with_analysis)
        .filter(
            is_official=True,
            status=RunStatus.COMPLETED,
            release__status=ReleaseStatus.PUBLISHED,
        )
        .order_by(*PUBLIC_RUN_ORDER)
    )


def public_run_default(*, with_analysis: bool = False) -> EvaluationRun | None:
    """The latest published release's headline run."""
    return public_runs(with_analysis=with_analysis).first()


def public_run(run_id: str | int | None, *, with_analysis: bool = False) -> EvaluationRun | None:
    """The public run asked for (``?run=``), or the default when none is asked for.

    None when the id is not that of a public run (pages answer 404) or nothing is public.
    """
    pk = identifier_parse(run_id, name="run")
    if pk is None:
        return public_run_default(with_analysis=with_analysis)
    return public_runs(with_analysis=with_analysis).filter(pk=pk).first()


def public_run_for_target(target_id: str | int | None) -> EvaluationRun | None:
    """The run a model's label shows without ``?run=``: the first public run (newest release,
    headline first) in which the model was a target."""
    pk = identifier_parse(target_id, name="model")
    if pk is None:
        return None
    return public_runs().filter(targets=pk).first()


def staff_run(run_id: str | int | None, *, with_analysis: bool = False) -> EvaluationRun | None:
    """Any run with summaries, official or not, for maintainers and researchers (pages mark
    it "not public")."""
    pk = identifier_parse(run_id, name="run")
    if pk is None:
        return None
    return _summarised_runs(with_analysis=with_analysis).filter(pk=pk).first()


def headline_run_ids(runs: list[EvaluationRun]) -> set[int]:
    """Of public runs in `public_runs` order, the id of each release's headline run (its first)."""
    seen: set[int | None] = set()
    heads = set()
    for run in runs:
        if run.release_id not in seen:
            seen.add(run.release_id)
            heads.add(run.pk)
    return heads


def run_ids_with_target(target_id: int) -> list[int]:
    """Ids of the public runs in which a model was a target."""
    return list(public_runs().filter(targets=target_id).values_list("pk", flat=True))


def public_conversations() -> QuerySet[Conversation]:
    """Conversations visitors may read: those of public runs, less any held back for blind
    review (`evaluations.visibility`, the one gate of every public path)."""
    held = blind_held_scenarios()
    return conversations_public(held=held).filter(run__in=public_runs().values("pk"))


def public_run_with_targets(pk: int) -> EvaluationRun | None:
    """A public run by id with its targets loaded, or None when it is not public."""
    return public_runs().prefetch_related("targets").filter(pk=pk).first()


def run_targets(run: EvaluationRun) -> QuerySet[ModelConfiguration]:
    return run.targets.order_by("name")


def run_target(run: EvaluationRun, pk: str | int | None) -> ModelConfiguration | None:
    """One of the run's targets by id; None when none is given or it is not a target (an id
    that is not a number is a bad request, ``core.ids``)."""
    target_id = identifier_parse(pk, name="model")
    if target_id is None:
        return None
    return run_targets(run).filter(pk=target_id).first()


def run_summary_rows(
    *,
    run: EvaluationRun,
    level: str | None = None,
    age_context: str | None = None,
    polarity: str | None = None,
    target_id: int | None = None,
    area: str = "",
    subarea: str = "",
    metric: str = "",
    language: str = "",
) -> QuerySet[PassRateSummary]:
    """A run's summary rows at every level, narrowed by whichever filters are given; those
    over every language unless ``language`` names one.

    In the order the refresh wrote them (level by level): an index walk, not a sort of the
    run's tens of thousands of rows across joins.
    """
    rows = PassRateSummary.objects.filter(run=run, language=language)
    if level:
        rows = rows.filter(level=level)
    if age_context:
        rows = rows.filter(age_context=age_context)
    if polarity:
        rows = rows.filter(polarity=polarity)
    if target_id is not None:
        rows = rows.filter(target_id=target_id)
    if area:
        rows = rows.filter(area__slug=area)
    if subarea:
        rows = rows.filter(subarea__slug=subarea)
    if metric:
        rows = rows.filter(metric_version__metric__key=metric)
    return rows.select_related("target", "area", "subarea", "metric_version__metric").order_by("pk")


def public_run_conversations(
    *, run_id: int, metric: str = "", target_id: int | None = None, status: str = ""
) -> QuerySet[Conversation]:
    """A public run's conversations, narrowed by metric key, target and status."""
    conversations = public_conversations().filter(run_id=run_id)
    if metric:
        conversations = conversations.filter(scenario__metric_version__metric__key=metric)
    if target_id is not None:
        conversations = conversations.filter(target_id=target_id)
    if status:
        conversations = conversations.filter(status=status)
    return conversations.select_related("scenario__metric_version__metric", "target").order_by("pk")


def public_conversation(pk: int) -> Conversation | None:
    """A conversation of a public run with its turns and judge readings, or None."""
    return (
        public_conversations()
        .select_related("scenario__metric_version__metric", "target")
        .prefetch_related("turns", Prefetch("judgments", Judgment.objects.select_related("judge")))
        .filter(pk=pk)
        .first()
    )


def public_scenario(pk: int) -> Scenario | None:
    """A scenario that some public run's conversations were simulated from, or None."""
    return (
        Scenario.objects.filter(pk=pk, pk__in=public_conversations().values("scenario_id"))
        .select_related("metric_version__metric")
        .first()
    )


def run_uses_offline_model(run: EvaluationRun) -> bool:
    """True when any target, the simulator or the judge is the offline demo model."""
    offline = Q(provider=Provider.OFFLINE)
    return (
        run.targets.filter(offline).exists()
        or ModelConfiguration.objects.filter(
            offline, pk__in=[run.judge_id, run.simulator_id]
        ).exists()
    )


def run_is_synthetic(run: EvaluationRun) -> bool:
    """True when the run, its release or any of its models is flagged synthetic."""
    return (
        run.synthetic
        or (run.release is not None and run.release.synthetic)
        or run.targets.filter(synthetic=True).exists()
        or ModelConfiguration.objects.filter(
            synthetic=True, pk__in=[run.judge_id, run.simulator_id]
        ).exists()
    )


def summaries(
    *, run: EvaluationRun, level: str, age_context: str = "all", language: str = ""
) -> QuerySet[PassRateSummary]:
    return PassRateSummary.objects.filter(
        run=run, level=level, age_context=age_context, language=language
    )


def run_language_analysis(*, run: EvaluationRun) -> dict:
    """The run's comparison of languages from its analysis (`services.languages`), read
    alone: the rest of the analysis JSON stays in the database."""
    found = (
        RunAnalysis.objects.filter(run=run).values_list("robustness__languages", flat=True).first()
    )
    return found if isinstance(found, dict) else {}


def summary_languages(*, run: EvaluationRun) -> list[str]:
    """The languages the run's figures are given apart for (sorted tags): empty when its
    conversations are in one language, as only then are no per-language rows written."""
    return sorted(
        PassRateSummary.objects.filter(run=run, level=SummaryLevel.OVERALL)
        .exclude(language="")
        .order_by()
        .values_list("language", flat=True)
        .distinct()
    )


def overall_pass_rates(*, run: EvaluationRun) -> QuerySet[PassRateSummary]:
    return (
        summaries(run=run, level=SummaryLevel.OVERALL)
        .select_related("target")
        .order_by("polarity", "-rate", "target__name")
    )


def explore_subarea_rates(*, run: EvaluationRun, age_context: str = "all") -> list[dict]:
    """Subarea pass rates per model for one run and age context (the Explore query)."""
    return list(
        summaries(run=run, level=SummaryLevel.SUBAREA, age_context=age_context)
        .order_by("subarea__area__position", "subarea__position", "polarity", "target__name")
        .values(
            "subarea__area__name",
            "subarea__name",
            "polarity",
            "target__name",
            "rate",
            "ci_low",
            "ci_high",
            "n_conversations",
        )
    )


def metric_labels_for_versions(version_ids) -> dict[int, dict]:
    """Metric version id -> its metric's key and name, for tables that list metrics by version;
    the name in the reader's language when it can be, with `lang` set to the tag of the name
    when it is shown in another (`metric_version_texts`). Two queries at most."""
    versions = list(
        MetricVersion.objects.filter(pk__in=list(version_ids))
        .select_related("metric")
        .only("pk", "name", "criterion", "failure_condition", "language", "metric__key")
    )
    shown = metric_version_texts(versions)
    return {
        v.pk: {
            "key": v.metric.key,
            "name": shown[v.pk].name,
            "lang": shown[v.pk].language if shown[v.pk].is_fallback else "",
        }
        for v in versions
    }


# (target id, polarity, key id or None, age context) -> Estimate
EstimateKey = tuple[int, str, int | None, str]


def summary_estimates(
    *,
    run: EvaluationRun,
    level: str,
    ages: tuple[str, ...] = ("all",),
    polarity: str | None = None,
    target_ids: list[int] | None = None,
    key_ids: list[int] | None = None,
    language: str = "",
) -> dict[EstimateKey, Estimate]:
    """Pass rates of one level as Estimates, in one query, keyed for lookup by the pages.

    The key id is the area, subarea or metric version id by level (None for overall). Reading
    through here keeps every page on the estimate type (intervals, n, exclusions).
    ``language``: a tag for that language's figures alone; blank for every language pooled.
    """
    key_field = {
        SummaryLevel.OVERALL: None,
        SummaryLevel.AREA: "area_id",
        SummaryLevel.SUBAREA: "subarea_id",
        SummaryLevel.METRIC: "metric_version_id",
    }[level]
    rows = PassRateSummary.objects.filter(
        run=run, level=level, age_context__in=ages, language=language
    )
    if polarity:
        rows = rows.filter(polarity=polarity)
    if target_ids is not None:
        rows = rows.filter(target_id__in=target_ids)
    if key_ids is not None and key_field:
        rows = rows.filter(**{f"{key_field}__in": key_ids})
    return {
        (
            row.target_id,
            row.polarity,
            getattr(row, key_field) if key_field else None,
            row.age_context,
        ): row.estimate
        for row in rows.order_by()
    }


def analyses_stamp_sql() -> str:
    """The page cache's stamp part over run analyses: how many, and the latest refresh."""
    table = RunAnalysis._meta.db_table
    return f"(SELECT COUNT(*) || '.' || {latest('computed_at')} FROM {table})"  # noqa: S608


def anchor_studies_stamp_sql() -> str:
    """The page cache's stamp part over published anchor studies."""
    table = AnchorStudy._meta.db_table
    return f"(SELECT COUNT(*) || '.' || {latest('published_at')} FROM {table})"  # noqa: S608


def published_anchor_studies() -> QuerySet[AnchorStudy]:
    """Anchor studies whose release is published, newest first, with what their pages name."""
    return AnchorStudy.objects.filter(release__status=ReleaseStatus.PUBLISHED).select_related(
        "release", "with_anchors", "without_anchors"
    )


def published_anchor_study(study_id: str | int | None) -> AnchorStudy | None:
    """The published study asked for (``?study=``), or the newest when none is asked for."""
    pk = identifier_parse(study_id, name="study")
    studies = published_anchor_studies()
    return studies.first() if pk is None else studies.filter(pk=pk).first()


def run_metric_keys(run: EvaluationRun) -> list[str]:
    """Keys of the metrics the run's summaries show, in key order."""
    return sorted(
        summaries(run=run, level=SummaryLevel.METRIC)
        .order_by()
        .values_list("metric_version__metric__key", flat=True)
        .distinct()
    )


def run_subarea_slugs(run: EvaluationRun) -> list[str]:
    """Slugs of the subareas the run's summaries show, in slug order."""
    return sorted(
        summaries(run=run, level=SummaryLevel.SUBAREA)
        .order_by()
        .values_list("subarea__slug", flat=True)
        .distinct()
    )
