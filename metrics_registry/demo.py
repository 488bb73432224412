"""The demo catalogue as an imported benchmark, and a published demo release containing it.

So the Metrics, Releases and results pages have something to show. The catalogue itself is
data, in `demo_catalog`.
"""

from collections.abc import Sequence
from functools import partial

from django.db import transaction

from core.progress import Progress, progress_ignore
from core.seed_steps import SeedStep

from .demo_catalog import DEMO_METRICS
from .demo_texts import demo_texts_seed
from .models import Metric, Release
from .services import benchmark_get_or_create, metric_create
from .services.releases import (
    ReleaseFreeze,
    release_add_versions,
    release_create,
    release_publish,
)

DEMO_BENCHMARK_SLUG = "impactbench-demo-companion"
DEMO_RELEASE_VERSION = "1.0.0"

__all__ = [
    "DEMO_BENCHMARK_SLUG",
    "DEMO_METRICS",
    "DEMO_RELEASE_VERSION",
    "demo_registry_seed",
    "demo_release_seed",
    "demo_seed_steps",
]


@transaction.atomic
def demo_registry_seed(progress: Progress = progress_ignore) -> str:
    """Create the demo benchmark and any of its metrics that are missing; keeps edits."""
    benchmark = benchmark_get_or_create(
        slug=DEMO_BENCHMARK_SLUG,
        name="ImpactBench demo: companion behaviours",
        citation="Written for the ImpactBench demo; not a published benchmark.",
        description="Example metrics in the standard template, covering all 14 subareas and "
        "both polarities.",
        license="CC0 1.0",
    )
    existing = set(
        Metric.objects.filter(benchmark=benchmark).values_list("source_reference", flat=True)
    )
    created = 0
    for number, (name, criterion, polarity, subareas, category, ages) in enumerate(
        DEMO_METRICS, start=1
    ):
        progress(number - 1, len(DEMO_METRICS))
        reference = f"demo item {number}"
        if reference in existing:
            continue
        metric_create(
            name=name,
            criterion=criterion,
            polarity=polarity,
            subarea_slugs=subareas,
            label_category_slug=category,
            age_contexts=ages,
            source_kind="benchmark",
            benchmark=benchmark,
            source_reference=reference,
            created_by=None,
            status="validated",
            change_note="Demo metric.",
        )
        created += 1
    total = Metric.objects.filter(benchmark=benchmark).count()
    return f"Registry demo ({benchmark.name}): {created} metrics created, {total - created} kept."


@transaction.atomic
def demo_release_seed(*, freezes: Sequence[ReleaseFreeze] = ()) -> str:
    """Publish release 1.0.0 with the current version of every demo metric, once, with the
    upper apps' `freezes` (the demo app passes them).

    An existing release with that version is left as it is (published releases are
    immutable, and a maintainer may have made their own 1.0.0).
    """
    release = Release.objects.filter(version=DEMO_RELEASE_VERSION).first()
    if release is not None:
        return f"Demo release {DEMO_RELEASE_VERSION}: kept ({release.items.count()} metrics)."
    metrics = Metric.objects.filter(benchmark__slug=DEMO_BENCHMARK_SLUG).select_related(
        "current_version"
    )
    versions = [m.current_version for m in metrics if m.current_version is not None]
    release = release_create(
        version=DEMO_RELEASE_VERSION,
        title="Demo release",
        notes="The demo catalogue, evaluated with offline demo models only. Its results show "
        "how the platform works; they say nothing about any real model.",
        created_by=None,
    )
    release_add_versions(release=release, versions=versions)
    release_publish(release, published_by=None, freezes=freezes)
    return f"Demo release {DEMO_RELEASE_VERSION}: published with {len(versions)} metrics."


def demo_seed_steps(*, release_freezes: Sequence[ReleaseFreeze]) -> list[SeedStep]:
    """This app's steps of the demo seed (the demo app runs them, and passes the freezes the
    demo release is published with)."""
    return [
        SeedStep("metrics", "catalogue", demo_registry_seed, "metrics", order=20),
        SeedStep(
            "release", "release", partial(demo_release_seed, freezes=release_freezes), order=30
        ),
        SeedStep(
            "metric-texts",
            "Spanish metric texts",
            partial(demo_texts_seed, benchmark_slug=DEMO_BENCHMARK_SLUG),
            order=31,
        ),
    ]
