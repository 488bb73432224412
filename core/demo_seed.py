"""The demo seed's steps in order, and running them with progress.

One list for `seed_demo`, `manage.py demo` (which runs `seed_demo` in the background) and
`benchmarks/demo_seed.py`. Every step is idempotent: it creates what is missing and keeps what
exists, so a seed that stopped half-way resumes where it stopped when run again.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from .demo_progress import SeedTracker


@dataclass(frozen=True)
class SeedStep:
    key: str
    label: str  # in the banner: "Seeding demo data: <label> 412 / 1,152 <unit>"
    func: Callable[..., str]
    unit: str = ""
    weight: float = 1.0  # its usual share of the seed's time, relative to the others

    @property
    def counts(self) -> bool:
        """Whether the step reports (done, total) through a `progress` argument."""
        return "progress" in inspect.signature(self.func).parameters


def demo_seed_steps() -> list[SeedStep]:
    """The seeding steps after migrations and demo accounts, slowest near the end."""
    from evaluations.demo import (
        demo_anchor_study_seed,
        demo_run_seed,
        demo_scenarios_seed,
        demo_summaries_seed,
    )
    from llm.demo import demo_configurations_seed
    from metrics_registry.demo import demo_registry_seed, demo_release_seed
    from review.demo import demo_rating_queues_seed
    from rubrics.demo import demo_rubric_items_seed

    steps = [
        SeedStep("configurations", "offline model configurations", demo_configurations_seed),
        SeedStep("metrics", "catalogue", demo_registry_seed, "metrics"),
        SeedStep("release", "release", demo_release_seed),
        SeedStep("rubric", "rubric items", demo_rubric_items_seed),
    ]
    if settings.DEMO_SEED_EVALUATIONS:
        steps += [
            # Weights from benchmarks/demo_seed.py: the run is most of the time.
            SeedStep("scenarios", "scenarios", demo_scenarios_seed, "metrics", 3),
            SeedStep("anchor_study", "anchor study", demo_anchor_study_seed, "conversations", 6),
            SeedStep("run", "run", demo_run_seed, "conversations", 80),
            SeedStep("summaries", "summaries", demo_summaries_seed, "runs", 2),
        ]
    # After the content it samples from: each kind with something to rate gets a queue.
    steps.append(SeedStep("queues", "rating queues", demo_rating_queues_seed))
    return steps


def demo_seed_run(
    tracker: SeedTracker,
    steps: list[SeedStep],
    *,
    on_step: Callable[[SeedStep], None] | None = None,
    on_report: Callable[[SeedStep, str], None] | None = None,
) -> list[str]:
    """Run the steps in order, recording progress; a failure is recorded and raised."""
    reports = []
    whole = sum(step.weight for step in steps) or 1.0
    before = 0.0
    for index, step in enumerate(steps, start=1):
        tracker.step(
            index,
            key=step.key,
            label=step.label,
            unit=step.unit,
            share_before=before / whole,
            share=step.weight / whole,
        )
        before += step.weight
        if on_step is not None:
            on_step(step)
        try:
            report = step.func(progress=tracker.count) if step.counts else step.func()
        except Exception as error:
            tracker.fail(f"{step.label}: {type(error).__name__}: {error}")
            raise
        tracker.report(report)
        if on_report is not None:
            on_report(step, report)
        reports.append(report)
    tracker.finish()
    return reports
