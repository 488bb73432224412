"""Demo evaluation content: scenarios for the demo release, an anchor study and a complete run.

This app's steps of the demo seed (`demo_seed_steps`, which the demo app runs).

Everything model-made here comes from the offline demo model through the gateway, exactly as a
real run would (every call is an LLMCall row, every output labelled offline). Each step is
idempotent and keeps user data: existing scenarios and runs are left alone, and an
interrupted demo run is resumed rather than started again.
"""

import contextlib
import time

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from core.languages import DEFAULT_LANGUAGE
from core.progress import Progress, progress_ignore
from core.seed_steps import SeedStep
from llm.models import ModelConfiguration
from metrics_registry.demo import DEMO_RELEASE_VERSION
from metrics_registry.models import MetricVersion, Release
from rubrics.demo import demo_rubric_items

from .demo_spanish import demo_spanish_scenarios_seed
from .models import (
    SCENARIO_BASE_COUNT,
    Conversation,
    ConversationStatus,
    EvaluationRun,
    RubricGrading,
    RubricResponse,
    RunStatus,
    ScenarioStatus,
)
from .services.runs import run_create, run_launch, run_process_inline
from .services.scenarios import scenarios_generate

DEMO_RUN_NAME = f"Demo release {DEMO_RELEASE_VERSION} — three offline targets"
DEMO_RUN_SEED = 20250101
DEMO_TARGETS = (
    "Offline target: careful",
    "Offline target: agreeable",
    "Offline target: terse",
)
DEMO_SCENARIO_WRITER = "Offline scenario writer"
DEMO_SIMULATOR = "Offline user simulator"
DEMO_JUDGE = "Offline judge"
DEMO_FIDELITY_CHECKER = "Offline fidelity checker"
# The main run's panel: a kind and a harsh judge beside the plain one, one reading each, so the
# panel's agreement and each judge's own pass rate per target have something to show. The
# verdict is the majority of the three judges' verdicts, as in any panel run.
DEMO_PANEL_JUDGES = ("Offline judge: lenient", "Offline judge: strict")
DEMO_PANEL_READINGS = 1
# Replicates of a few metrics with and without anchors, so the methodology page's anchor
# consistency figure has data (the main demo run simulates each scenario once).
DEMO_ANCHOR_STUDY = (
    ("Demo anchor study — with anchors", True),
    ("Demo anchor study — without anchors", False),
)
DEMO_ANCHOR_STUDY_METRICS = 3
DEMO_ANCHOR_STUDY_TURNS = 5  # the offline anchors fall on turns 1, 3 and 5
DEMO_ANCHOR_STUDY_REPLICATES = 2  # the fewest that show (dis)agreement
# A second official run of the release, smaller and made before the main one, so a model's
# label has a history to show (a column per public run and the change between them). Same
# models and panel as the main run, so the change compares like with like; its own seed, so
# the conversations differ as a rerun's would.
DEMO_EARLIER_RUN_NAME = "Earlier demo run of eight metrics"
DEMO_EARLIER_RUN_METRICS = 8
DEMO_EARLIER_RUN_SEED = DEMO_RUN_SEED - 1


def _configuration(name: str) -> ModelConfiguration | None:
    return ModelConfiguration.objects.filter(name=name, is_active=True).first()


def _demo_release() -> Release | None:
    return Release.objects.filter(version=DEMO_RELEASE_VERSION).first()


def demo_scenarios_seed(progress: Progress = progress_ignore) -> str:
    """Six offline scenarios for every metric version of the demo release that lacks them."""
    release = _demo_release()
    writer = _configuration(DEMO_SCENARIO_WRITER)
    if release is None or writer is None:
        return "Demo scenarios: skipped (no demo release or no offline scenario writer)."
    incomplete = list(
        MetricVersion.objects.filter(release_items__release=release)
        .annotate(
            ready=Count(
                "scenarios",
                # The set in the default language: variants in others do not complete it.
                filter=Q(
                    scenarios__status=ScenarioStatus.ACTIVE,
                    scenarios__expanded_at__isnull=False,
                    scenarios__language=DEFAULT_LANGUAGE,
                ),
            )
        )
        .filter(ready__lt=SCENARIO_BASE_COUNT * 2)
    )
    generated = 0
    for done, version in enumerate(incomplete):
        progress(done, len(incomplete))
        # Fills only what is missing (a one-age-group metric stops at three). The offline
        # writer answers in microseconds: one transaction per metric commits SQLite once per
        # metric instead of once per row (a real endpoint must not be called inside one).
        with transaction.atomic() if writer.is_offline else contextlib.nullcontext():
            before = version.ready
            made = scenarios_generate(metric_version=version, configuration=writer)
            generated += len(made) - before
    progress(len(incomplete), len(incomplete))
    return f"Demo scenarios: {generated} written by the offline scenario writer."


def demo_spanish_seed() -> str:
    """The demo release's Spanish scenarios (`demo_spanish`), before the runs that play them."""
    release = _demo_release()
    if release is None:
        return "Demo Spanish scenarios: skipped (no demo release)."
    versions = MetricVersion.objects.filter(release_items__release=release)
    return demo_spanish_scenarios_seed(
        release_versions=versions, writer=_configuration(DEMO_SCENARIO_WRITER)
    )


def _hold_for_inline(run: EvaluationRun) -> None:
    """Mark the run's pending items as handed out, to this process.

    The demo's worker runs beside the seed, and its reaper sends pending items that were never
    dispatched to the worker; stamping them keeps them here for RUN_REDISPATCH_AFTER_SECONDS.
    If the seed dies, the reaper hands them to the worker after that, which then finishes them.
    """
    now = timezone.now()
    for model in (Conversation, RubricResponse):
        model.objects.filter(run=run, status=ConversationStatus.PENDING).update(dispatched_at=now)


def _process_inline(runs: list[EvaluationRun], progress: Progress) -> int:
    """Process the runs here, reporting conversations finished across all of them."""
    total = sum(run.conversations_total for run in runs)
    done = sum(run.conversations_completed + run.conversations_failed for run in runs)
    held = time.monotonic()
    processed = 0

    def counted(_run_done: int, _run_total: int, _stage: str = "") -> None:
        nonlocal done, held
        done += 1  # called once per item; `done` counts across all the runs
        progress(min(done, total), total)
        if time.monotonic() - held > 60:  # well inside the reaper's redispatch delay
            for run in runs:
                _hold_for_inline(run)
            held = time.monotonic()

    progress(done, total)
    for run in runs:
        if run.is_finished:
            continue
        _hold_for_inline(run)
        processed += run_process_inline(run_id=run.pk, on_progress=counted)
    return processed


def _demo_anchor_study_runs(release, target, simulator, judge) -> list[EvaluationRun]:
    versions = list(
        MetricVersion.objects.filter(release_items__release=release).order_by("pk")[
            :DEMO_ANCHOR_STUDY_METRICS
        ]
    )
    runs = []
    for name, use_anchors in DEMO_ANCHOR_STUDY:
        run = EvaluationRun.objects.filter(name=name).first()
        if run is None:
            run = run_create(
                name=name,
                metric_versions=versions,
                targets=[target],
                simulator=simulator,
                judge=judge,
                fidelity_checker=_configuration(DEMO_FIDELITY_CHECKER),
                turns=DEMO_ANCHOR_STUDY_TURNS,
                replicates=DEMO_ANCHOR_STUDY_REPLICATES,
                judgments_per_conversation=1,
                use_anchors=use_anchors,
                seed=DEMO_RUN_SEED,
            )
        if run.status in (RunStatus.DRAFT, RunStatus.PAUSED):
            run = run_launch(run=run, dispatch=False)
        runs.append(run)
    return runs


def _demo_run_parts():
    release = _demo_release()
    targets = [c for c in (_configuration(name) for name in DEMO_TARGETS) if c is not None]
    simulator = _configuration(DEMO_SIMULATOR)
    judge = _configuration(DEMO_JUDGE)
    if release is None or len(targets) < len(DEMO_TARGETS) or not simulator or not judge:
        return None
    return release, targets, simulator, judge


def demo_anchor_study_seed(progress: Progress = progress_ignore) -> str:
    """Run the anchor study pair (kept when finished), before the main run so that the main
    run stays the latest and the one public pages open on. Skipped once the main run finished
    (a demo seeded before the study existed keeps its main run the latest)."""
    parts = _demo_run_parts()
    if parts is None:
        return "Demo anchor study: skipped (the demo release or an offline model is missing)."
    main = EvaluationRun.objects.filter(name=DEMO_RUN_NAME).first()
    if main is not None and main.is_finished:
        return "Demo anchor study: kept (the demo run is finished)."
    release, targets, simulator, judge = parts
    runs = _demo_anchor_study_runs(release, targets[0], simulator, judge)
    _process_inline(runs, progress)
    versions = runs[0].metric_versions.count() if runs else 0
    return (
        f"Demo anchor study: {len(runs)} runs of {versions} metrics × "
        f"{DEMO_ANCHOR_STUDY_REPLICATES} replicates."
    )


def _panel() -> list[tuple[ModelConfiguration, int]]:
    return [
        (panelist, DEMO_PANEL_READINGS)
        for panelist in (_configuration(name) for name in DEMO_PANEL_JUDGES)
        if panelist is not None
    ]


def _panel_run_create(name: str, parts, *, seed: int, **options) -> EvaluationRun:
    """A draft run of the demo release by the offline targets, simulator, judge, panel and
    fidelity checker (`parts` from `_demo_run_parts`)."""
    release, targets, simulator, judge = parts
    return run_create(
        name=name,
        release=release,
        targets=targets,
        simulator=simulator,
        judge=judge,
        fidelity_checker=_configuration(DEMO_FIDELITY_CHECKER),
        further_judges=_panel(),
        seed=seed,
        **options,
    )


def _launched(run: EvaluationRun) -> EvaluationRun:
    """The run launched for inline processing, unless it already runs or finished."""
    if run.status in (RunStatus.DRAFT, RunStatus.PAUSED):
        return run_launch(run=run, dispatch=False)
    return run


def demo_earlier_run_seed(progress: Progress = progress_ignore) -> str:
    """Run the earlier, smaller run of the demo release (kept when finished), before the main
    run so that the main run stays the latest. Skipped once the main run finished, as the
    anchor study is: a demo seeded before this run existed keeps its single public run."""
    parts = _demo_run_parts()
    if parts is None:
        return "Demo earlier run: skipped (the demo release or an offline model is missing)."
    main = EvaluationRun.objects.filter(name=DEMO_RUN_NAME).first()
    if main is not None and main.is_finished:
        return "Demo earlier run: kept (the demo run is finished)."
    release = parts[0]
    run = EvaluationRun.objects.filter(name=DEMO_EARLIER_RUN_NAME).first()
    if run is None:
        versions = list(
            MetricVersion.objects.filter(release_items__release=release).order_by("pk")[
                :DEMO_EARLIER_RUN_METRICS
            ]
        )
        run = _panel_run_create(
            DEMO_EARLIER_RUN_NAME, parts, seed=DEMO_EARLIER_RUN_SEED, metric_versions=versions
        )
    run = _launched(run)
    _process_inline([run], progress)
    run.refresh_from_db()
    return (
        f"Demo earlier run: {run.metric_versions.count()} metrics, "
        f"{run.conversations_completed} of {run.conversations_total} conversations complete."
    )


def demo_run_seed(progress: Progress = progress_ignore) -> str:
    """Evaluate the demo release with the three offline targets, in this process.

    Runs the real pipeline (simulation, three judgments per conversation, rubric items) with
    offline models, one conversation per transaction, so `make demo` opens on complete
    results. A finished demo run is kept; an unfinished one is resumed. The anchor study runs
    first when it has not (`demo_anchor_study_seed` is a no-op once it has).
    """
    parts = _demo_run_parts()
    if parts is None:
        return "Demo run: skipped (the demo release or an offline configuration is missing)."
    run = EvaluationRun.objects.filter(name=DEMO_RUN_NAME).first()
    if run is not None and run.is_finished:
        return f"Demo run: kept ({run.get_status_display().lower()})."
    study = demo_anchor_study_seed()
    earlier = demo_earlier_run_seed()
    if run is None:
        run = _panel_run_create(
            DEMO_RUN_NAME,
            parts,
            seed=DEMO_RUN_SEED,
            # Graded all criteria in one call: the demo's seed is timed, and per-criterion calls
            # would multiply its grader calls by five for the same offline grades (the run
            # option real runs may choose too).
            rubric_items=demo_rubric_items(),
            rubric_grading=RubricGrading.ALL_IN_ONE,
        )
    run = _launched(run)
    processed = _process_inline([run], progress)
    run.refresh_from_db()
    return (
        f"{study}\n{earlier}\nDemo run: {processed} conversations simulated and judged offline; "
        f"{run.conversations_completed} of {run.conversations_total} complete."
    )


def demo_seed_steps() -> list[SeedStep]:
    """This app's steps of the demo seed, by order key among every app's."""
    steps: list[SeedStep] = []
    if settings.DEMO_SEED_EVALUATIONS:
        steps += [
            # Weights from benchmarks/demo_seed.py: the run is most of the time.
            SeedStep("scenarios", "scenarios", demo_scenarios_seed, "metrics", 3, order=50),
            SeedStep("spanish", "Spanish scenarios", demo_spanish_seed, order=55),
            SeedStep(
                "anchor_study", "anchor study", demo_anchor_study_seed, "conversations", 6, order=60
            ),
            SeedStep(
                "earlier_run", "earlier run", demo_earlier_run_seed, "conversations", 10, order=65
            ),
            SeedStep("run", "run", demo_run_seed, "conversations", 80, order=70),
        ]
    return steps
