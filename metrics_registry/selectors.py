"""Reading the registry. Visibility rules live here so pages and the API agree."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet

from core.pagecache import latest
from core.roles import Role, user_has_role

from .models import (
    Area,
    Benchmark,
    LabelCategory,
    Metric,
    MetricStatusChange,
    MetricVersion,
    MetricVersionText,
    Release,
    ReleaseItem,
    Subarea,
    ValidationStatus,
)

User = AbstractBaseUser | AnonymousUser | None


def area_list_with_subareas() -> QuerySet[Area]:
    return Area.objects.prefetch_related(
        Prefetch("subareas", queryset=Subarea.objects.order_by("position"))
    )


def subarea_list() -> QuerySet[Subarea]:
    return Subarea.objects.select_related("area")


def label_category_list() -> QuerySet[LabelCategory]:
    return LabelCategory.objects.all()


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.all()


def user_sees_draft_metrics(user: User) -> bool:
    return user is not None and user_has_role(user, Role.RESEARCHER, Role.MAINTAINER)


def user_sees_draft_releases(user: User) -> bool:
    return user is not None and user_has_role(user, Role.MAINTAINER)


def metric_list(
    *,
    user: User = None,
    area: str | None = None,
    subarea: str | None = None,
    polarity: str | None = None,
    label_category: str | None = None,
    status: str | None = None,
    search: str | None = None,
    benchmark: str | None = None,
) -> QuerySet[Metric]:
    """Metrics filtered on their current version; slugs for area, subarea, label category.

    Draft metrics are shown only to researchers and maintainers.
    """
    metrics = Metric.objects.all()
    if not user_sees_draft_metrics(user):
        metrics = metrics.visible_to_public()
    if area:
        metrics = metrics.filter(current_version__subareas__area__slug=area)
    if subarea:
        metrics = metrics.filter(current_version__subareas__slug=subarea)
    if polarity:
        metrics = metrics.filter(current_version__polarity=polarity)
    if label_category:
        metrics = metrics.filter(current_version__label_category__slug=label_category)
    if status:
        metrics = metrics.filter(validation_status=status)
    if benchmark:
        metrics = metrics.filter(benchmark__slug=benchmark)
    if search:
        text = search.strip()
        metrics = metrics.filter(
            Q(key__iexact=text)
            | Q(current_version__name__icontains=text)
            | Q(current_version__criterion__icontains=text)
            | Q(credit_name__icontains=text)
            | Q(benchmark__name__icontains=text)
            # A reader searches in the language the list shows them (`text_selectors`).
            | Exists(
                MetricVersionText.objects.shown_publicly()
                .filter(metric_version=OuterRef("current_version"))
                .filter(Q(name__icontains=text) | Q(criterion__icontains=text))
            )
        )
    # Joins through subareas can repeat a metric; the subquery keeps ordering and paging simple.
    return (
        Metric.objects.filter(pk__in=metrics.values("pk"))
        .select_related(
            "benchmark",
            "current_version",
            "current_version__label_category",
        )
        .prefetch_related(
            Prefetch("current_version__subareas", queryset=Subarea.objects.select_related("area"))
        )
        .order_by("key")
    )


def metric_current_version(metric: Metric) -> MetricVersion | None:
    if metric.current_version_id:
        return metric.current_version
    return metric.versions.order_by("-number").first()


def metric_versions(metric: Metric) -> QuerySet[MetricVersion]:
    return (
        metric.versions.select_related("label_category", "created_by")
        .prefetch_related("subareas__area")
        .order_by("-number")
    )


def metric_versions_with_metric() -> QuerySet[MetricVersion]:
    """Every metric version with its metric loaded (pages that name both)."""
    return MetricVersion.objects.select_related("metric")


def metric_status_history(metric: Metric) -> QuerySet[MetricStatusChange]:
    return metric.status_changes.select_related("changed_by").order_by("-changed_at", "-id")


def metric_version_list_current(*, statuses: tuple[str, ...] | None = None) -> QuerySet:
    """Current versions of all metrics, optionally of metrics in `statuses` (release drafting)."""
    versions = MetricVersion.objects.filter(metric__current_version=F("pk"))
    if statuses:
        versions = versions.filter(metric__validation_status__in=statuses)
    return versions.select_related("metric", "label_category").prefetch_related("subareas")


def release_list(*, user: User = None) -> QuerySet[Release]:
    """Published releases for everyone; maintainers also see drafts. Newest version first."""
    releases = Release.objects.select_related("published_by")
    if not user_sees_draft_releases(user):
        releases = releases.published()
    return releases.order_by("-major", "-minor", "-patch")


def release_version_exists(version: str) -> bool:
    """Whether any release, draft or published, has this version."""
    return Release.objects.filter(version=version).exists()


def release_previous_published(release: Release) -> Release | None:
    """The published release with the highest version below `release`'s version."""
    below = (
        Q(major__lt=release.major)
        | Q(major=release.major, minor__lt=release.minor)
        | Q(major=release.major, minor=release.minor, patch__lt=release.patch)
    )
    return (
        Release.objects.published()
        .filter(below)
        .exclude(pk=release.pk)
        .order_by("-major", "-minor", "-patch")
        .first()
    )


def release_next_published(release: Release) -> Release | None:
    """The published release with the lowest version above `release`'s version."""
    above = (
        Q(major__gt=release.major)
        | Q(major=release.major, minor__gt=release.minor)
        | Q(major=release.major, minor=release.minor, patch__gt=release.patch)
    )
    return (
        Release.objects.published()
        .filter(above)
        .exclude(pk=release.pk)
        .order_by("major", "minor", "patch")
        .first()
    )


def release_items(release: Release) -> QuerySet[ReleaseItem]:
    return (
        release.items.select_related(
            "metric",
            "metric__benchmark",
            "metric_version",
            "metric_version__label_category",
            # A version names itself by its metric (`__str__`): without this, a query per item.
            "metric_version__metric",
        )
        .prefetch_related(
            Prefetch("metric_version__subareas", queryset=Subarea.objects.select_related("area"))
        )
        .order_by("metric__key")
    )


def release_item_rows(release: Release) -> QuerySet[ReleaseItem]:
    """What the release page's table shows of each item, as flat rows in key order: a page of
    100 items as model objects with their subareas cost twenty times these rows."""
    return release.items.order_by("metric__key").values(
        key=F("metric__key"),
        number=F("metric_version__number"),
        name=F("metric_version__name"),
        polarity=F("metric_version__polarity"),
        label_category=F("metric_version__label_category__name"),
    )


# What the release API shows of each item, as flat rows (see `api.serializers`).
RELEASE_ITEM_VALUES = (
    "metric__key",
    "metric__validation_status",
    "metric_version_id",
    "metric_version__number",
    "metric_version__name",
    "metric_version__criterion",
    "metric_version__polarity",
    "metric_version__label_category__slug",
    "metric_version__label_category__name",
    "metric_version__label_category__polarity",
    "metric_version__rubric_notes",
    "metric_version__failure_condition",
    "metric_version__age_contexts",
    "metric_version__language",
    "metric_version__change_note",
    "metric_version__created_at",
)


def release_item_values(release: Release) -> QuerySet[ReleaseItem]:
    """The release's items as `RELEASE_ITEM_VALUES` rows: ~800 items as model objects (metric,
    version, category, subareas, areas) cost the API several times its rendering."""
    return release.items.order_by("metric__key").values(*RELEASE_ITEM_VALUES)


def release_subarea_values(release: Release) -> QuerySet:
    """(version id, subarea slug, name, area slug) of the release's versions, each version's
    subareas in the taxonomy's order."""
    through = MetricVersion.subareas.through
    return (
        through.objects.filter(metricversion__release_items__release=release)
        .order_by(*(f"subarea__{field}" for field in Subarea._meta.ordering))
        .values_list("metricversion_id", "subarea__slug", "subarea__name", "subarea__area__slug")
    )


def _unmapped(versions: QuerySet[MetricVersion]) -> QuerySet[MetricVersion]:
    return versions.annotate(subarea_count=Count("subareas")).filter(
        Q(label_category__isnull=True) | Q(subarea_count=0)
    )


def version_ids_needing_mapping(version_ids: list[int]) -> set[int]:
    """Which of these versions lack a label category or subareas (one query)."""
    if not version_ids:
        return set()
    found = _unmapped(MetricVersion.objects.filter(pk__in=version_ids))
    return set(found.values_list("pk", flat=True))


def metrics_needing_mapping() -> QuerySet[MetricVersion]:
    """Current versions of metrics imported without subareas or a label category, for the
    researchers who complete them."""
    current = MetricVersion.objects.filter(metric__current_version=F("pk")).exclude(
        metric__validation_status=ValidationStatus.RETIRED
    )
    return (
        _unmapped(current)
        .select_related("metric", "metric__benchmark", "label_category")
        .order_by("metric__benchmark__name", "metric__key")
    )


def releases_stamp_sql() -> str:
    """The page cache's stamp part over releases: how many, and the latest publication."""
    table = Release._meta.db_table
    return f"(SELECT COUNT(*) || '.' || {latest('published_at')} FROM {table})"  # noqa: S608


def metrics_stamp_sql() -> str:
    """The page cache's stamp part over metrics: the latest edit of any registry entry."""
    return f"(SELECT {latest('updated_at')} FROM {Metric._meta.db_table})"  # noqa: S608
