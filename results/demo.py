"""Demo summaries: the demo runs' pass rates, reliability and robustness, computed by the seed.

This app's step of the demo seed (`demo_seed_steps`, which the demo app runs).
"""

from django.conf import settings

from core.progress import Progress, progress_ignore
from core.seed_steps import SeedStep
from evaluations.demo import DEMO_ANCHOR_STUDY, DEMO_EARLIER_RUN_NAME, DEMO_RUN_NAME
from evaluations.models import EvaluationRun, RunStatus
from evaluations.services.official import run_set_headline, run_set_official

from .models import AnchorStudy, ReleaseExpertFigures
from .services import results_refresh
from .services.anchor_study import anchor_study_publish
from .services.expert_figures import release_expert_figures_freeze
from .services.fidelity import fidelity_published
from .services.fidelity_agreement import realism_votes


def demo_anchor_study_publish() -> str:
    """Publish the demo's anchor study with the demo run's release (once both study runs are
    complete), so its page and API answer have something to show."""
    if AnchorStudy.objects.exists():
        return "Demo anchor study: kept (published)."
    main = EvaluationRun.objects.filter(name=DEMO_RUN_NAME).select_related("release").first()
    study = {
        use: EvaluationRun.objects.filter(name=name, status=RunStatus.COMPLETED).first()
        for name, use in DEMO_ANCHOR_STUDY
    }
    if main is None or main.release is None or None in study.values():
        return "Demo anchor study: not published (its runs or the demo release are missing)."
    try:
        anchor_study_publish(with_run=study[True], without_run=study[False], release=main.release)
    except ValueError as error:
        return f"Demo anchor study: not published ({error})"
    return f"Demo anchor study: published with release {main.release.version}."


def demo_expert_figures_refreeze(run: EvaluationRun) -> str:
    """Freeze the demo release's expert figures again once its scenarios and run exist.

    The seed publishes the demo release before it writes the scenarios and the run (steps in
    order), so the figures frozen at publication would say "0 of 0 scenarios" for good. The
    demo release is seeded whole, like the synthetic one, so its figures are taken when the
    seed is done; a real release keeps the copy its publication froze.
    """
    frozen = ReleaseExpertFigures.objects.filter(release=run.release).first()
    if frozen is not None and str(run.pk) in frozen.figures.get("runs", {}):
        return "Demo expert figures: kept (frozen with the demo run)."
    if frozen is not None:
        frozen.delete()
    release_expert_figures_freeze(release=run.release)
    return "Demo expert figures: frozen with the demo's scenarios and run."


def demo_fidelity_agreement_stale(run: EvaluationRun) -> bool:
    """Whether the run's stored fidelity figures miss realism ratings given since: the worker
    refreshes the demo run as it completes, which may be before the seeded realism panel
    (`review.demo_realism`) rates it, and ratings of conversations book no refresh."""
    stored = fidelity_published(run).get("agreement") or {}
    return stored.get("n_ratings") != sum(len(v) for v in realism_votes([run]).values())


def demo_summaries_seed(progress: Progress = progress_ignore) -> str:
    """Compute the demo run's summaries now, so results pages are ready when the server starts.

    The run's completion also queues a refresh for the worker; doing it here only means the
    first visitor does not wait for it. Kept when already computed.
    """
    run = EvaluationRun.objects.filter(name=DEMO_RUN_NAME, status=RunStatus.COMPLETED).first()
    if run is None:
        return "Demo summaries: skipped (no completed demo run)."
    earlier = EvaluationRun.objects.filter(
        name=DEMO_EARLIER_RUN_NAME, status=RunStatus.COMPLETED
    ).first()
    # The demo's visitors see these runs (the main one as the release's headline, the earlier
    # one in each model's history); a maintainer's later test runs stay private.
    for public in (earlier, run):
        if public is None or public.is_official or public.release is None:
            continue
        if public.release.is_published:
            run_set_official(run=public, official=True, changed_by=None)
    run.refresh_from_db()
    if run.is_official and not run.is_headline:
        # As a maintainer would: the main run is the release's headline whatever the sizes.
        run_set_headline(run=run, headline=True, changed_by=None)
    frozen = demo_expert_figures_refreeze(run) if run.release is not None else ""
    names = [name for name, _ in DEMO_ANCHOR_STUDY] + [DEMO_EARLIER_RUN_NAME, DEMO_RUN_NAME]
    pending = EvaluationRun.objects.filter(
        name__in=names, status=RunStatus.COMPLETED, analysis__isnull=True
    ).order_by("finished_at")
    pending = list(pending)
    if run not in pending and demo_fidelity_agreement_stale(run):
        pending.append(run)
    published = demo_anchor_study_publish()
    if not pending:
        return f"Demo summaries: kept (official run).\n{published}\n{frozen}"
    for done, each in enumerate(pending):
        progress(done, len(pending))
        results_refresh(run=each)
    progress(len(pending), len(pending))
    return (
        "Demo summaries: pass rates, reliability and robustness computed (official run).\n"
        + published
        + f"\n{frozen}"
    )


def demo_seed_steps() -> list[SeedStep]:
    """This app's step of the demo seed, after the demo run it summarises."""
    if not settings.DEMO_SEED_EVALUATIONS:
        return []
    return [SeedStep("summaries", "summaries", demo_summaries_seed, "runs", 2, order=80)]
