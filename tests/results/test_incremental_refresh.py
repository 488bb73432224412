"""A refresh scoped to what changed gives the very figures of a full refresh from scratch, on a
run the pipeline produced (offline models): after one queue's ratings, after one model's
conversations were re-judged, after one metric's. Each scoped refresh is compared with the
summaries and analysis rebuilt from nothing; a scope that missed a dependency leaves a stale
figure and fails the comparison."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evaluations.models import Conversation, EvaluationRun, Judgment, SwapStudy
from evaluations.services.official import run_set_official
from results.models import FigureCell, PassRateSummary, RefreshRequest, RunAnalysis, RunFigures
from results.services import judge_trust, refresh, results_refresh
from results.services.figure_cells import figure_cells_discard
from results.services.freshness import on_ratings_changed
from results.services.refresh_scope import (
    Change,
    dependents,
    figures_refresh,
    refresh_booked,
    refresh_for,
)
from results.services.stored_figures import run_figures_discard
from review.events import RatingsChanged
from review.kinds import adapter_for
from review.models import Rating
from review.selectors import blind_verdict_ratings
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import release_with

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(
        reason="each test runs the pipeline inline for three models, or loads a synthetic "
        "release, and refreshes its figures at least once (2-4 s)"
    ),
]
RESAMPLES = 200


@pytest.fixture
def run():
    """Three models on two metrics through the pipeline (simulated, judged three times)."""
    from evaluations.services import runs
    from evaluations.services.scenarios import scenarios_generate
    from tests.evaluations.factories import current_version
    from tests.metrics_registry.factories import MetricFactory

    helper = OfflineConfigurationFactory()
    versions = [current_version(MetricFactory()) for _ in range(2)]
    for version in versions:
        scenarios_generate(metric_version=version, configuration=helper)
    run = runs.run_create(
        name="Incremental",
        metric_versions=versions,
        targets=[
            OfflineConfigurationFactory(name=name, extra_params={"offline_profile": profile})
            for name, profile in (("A", "careful"), ("B", "agreeable"), ("C", "careful"))
        ],
        simulator=helper,
        judge=helper,
        turns=2,
        judgments_per_conversation=3,
        seed=3,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    run.refresh_from_db()
    run.release = release_with("1.0.0", [v.metric for v in versions], publish=True)
    run.save(update_fields=["release"])
    results_refresh(run=run, n_resamples=RESAMPLES)
    return run


def _rate(run, kind: str, verdicts: tuple[str, ...], *, official: bool = True) -> None:
    """A queue of ``kind`` over the run's conversations, every item rated by two experts, then
    closed (a blind queue's ratings count once it is released). ``official``: the run is made
    official once the queue is drawn; a run left unofficial can be drawn from again."""
    raters = [UserFactory() for _ in range(2)]
    queue = queue_create(
        name=f"{kind} queue",
        kind=kind,
        created_by=None,
        size=6,
        seed=2,
        required_ratings=2,
        eligible_raters=raters,
        external_panel=kind == "external_panel",
    )
    # Blind items are drawn before the run is official (its conversations held back meanwhile).
    if official:
        run_set_official(run=run, official=True, changed_by=None)
    done = 0
    for rater in raters:
        while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
            answers = {"verdict": verdicts[done % len(verdicts)]}
            if kind == "conversation":
                # Every question of the screen (anchors too) gets its first choice; realism
                # alternates with `verdicts` ("present" read as realistic).
                questions = adapter_for(kind).questions(assignment.item)
                answers = {q.name: q.values[0] for q in questions}
                answers["realistic"] = (
                    "yes" if verdicts[done % len(verdicts)] == "present" else "no"
                )
            elif kind == "external_panel":
                answers["examples_adequate"] = "yes"
            else:
                answers["agreement"] = "agree"
            rating_submit(assignment=assignment, rater=rater, answers=answers)
            done += 1
    assert done > 0
    queue_set_status(queue=queue, status="closed")


def _state(run) -> tuple:
    """Every stored figure: each summary row (without its id), the analysis' two products,
    the documents pages read (`RunFigures`: kind, part, source, figures) and the cells they
    were assembled from (kind, key, digest, figures)."""
    columns = [f.attname for f in PassRateSummary._meta.concrete_fields if f.attname != "id"]
    rows = sorted(
        PassRateSummary.objects.filter(run=run).values_list(*columns),
        key=lambda row: tuple((value is None, str(value)) for value in row),
    )
    analysis = RunAnalysis.objects.get(run=run)
    documents = list(
        RunFigures.objects.filter(run=run)
        .order_by("kind", "part")
        .values_list("kind", "part", "source", "figures")
    )
    cells = list(
        FigureCell.objects.filter(run=run)
        .order_by("kind", "key")
        .values_list("kind", "key", "digest", "figures")
    )
    return rows, analysis.reliability, analysis.robustness, documents, cells


def _from_scratch(run) -> tuple:
    PassRateSummary.objects.filter(run=run).delete()
    RunAnalysis.objects.filter(run=run).delete()
    RunFigures.objects.filter(run=run).delete()
    assert figure_cells_discard([run.pk]) > 0
    results_refresh(run=run, n_resamples=RESAMPLES)
    return _state(run)


def _no_whole_analysis(monkeypatch) -> None:
    """A scoped refresh must not fall back to recomputing everything."""

    def refuse(*args, **kwargs):
        raise AssertionError("the whole analysis was recomputed")

    monkeypatch.setattr(refresh, "_analysis", refuse)
    monkeypatch.setattr(refresh, "summaries_replace", refuse)


def test_one_queues_ratings_refresh_only_its_figure_and_equal_a_full_refresh(run, monkeypatch):
    before = _state(run)
    assert before[1]["experts"]["available"] is False
    assert before[1]["endorsement"]["available"] is False
    _rate(run, "external_panel", ("present", "absent"), official=False)
    _rate(run, "judge_verdict", ("present",))
    summary_ids = set(PassRateSummary.objects.filter(run=run).values_list("pk", flat=True))
    change = Change(rating_kinds=frozenset({"external_panel", "judge_verdict"}), swap_studies=True)
    assert dependents(change).analysis == {"experts", "endorsement", "swap"}
    with monkeypatch.context() as patch:
        _no_whole_analysis(patch)
        refresh_for(run, change, n_resamples=RESAMPLES)
    scoped = _state(run)
    assert scoped[1]["experts"]["available"] is True
    assert scoped[1]["endorsement"]["available"] is True
    # The summary rows were not rewritten: ratings move no pass rate.
    assert set(PassRateSummary.objects.filter(run=run).values_list("pk", flat=True)) == summary_ids
    assert scoped == _from_scratch(run)


def test_realism_ratings_refresh_the_fidelity_agreement_alone_and_equal_a_full_refresh(
    run, monkeypatch
):
    before = _state(run)
    assert before[1]["fidelity"]["agreement"]["n_ratings"] == 0
    _rate(run, "conversation", ("present", "present", "absent"))
    change = Change(rating_kinds=frozenset({"conversation"}))
    assert dependents(change).analysis == {"fidelity"}
    with monkeypatch.context() as patch:
        _no_whole_analysis(patch)
        refresh_for(run, change, n_resamples=RESAMPLES)
    scoped = _state(run)
    agreement = scoped[1]["fidelity"]["agreement"]
    assert agreement["n_ratings"] > 0
    assert agreement["agreement"]["n"] > 0
    assert scoped == _from_scratch(run)


def test_a_scope_that_misses_a_queue_leaves_a_stale_figure(run):
    """The comparison above can fail: refreshing the blind figure after judge-verdict ratings
    leaves the endorsement figure stale."""
    _rate(run, "judge_verdict", ("present",))
    figures_refresh(run=run, names=["experts"], n_resamples=RESAMPLES)
    assert _state(run) != _from_scratch(run)


def _rejudge(conversations) -> None:
    """The judge's verdicts of these conversations changed: now passed in every other base
    scenario and failed in the rest (a base-scenario effect the intra-cluster correlation
    sees), every reading with its verdict."""
    rows = conversations.values_list(
        "pk", "scenario__base_index", "scenario__metric_version__polarity"
    )
    assert rows
    for pk, base, polarity in rows:
        passed = base % 2 == 0
        present = passed if polarity == "positive" else not passed
        Conversation.objects.filter(pk=pk).update(verdict_passed=passed, verdict_present=present)
        Judgment.objects.filter(conversation_id=pk).update(present=present)


@pytest.mark.parametrize("scope", ["model", "metric"])
def test_one_model_or_metric_rejudged_refreshes_every_figure_it_reaches(run, scope):
    judged = Conversation.objects.filter(run=run, verdict_passed__isnull=False)
    first = judged.order_by("pk").first()
    if scope == "model":
        changed = judged.filter(target_id=first.target_id)
        change = Change(targets=frozenset({first.target_id}))
        others = PassRateSummary.objects.filter(run=run).exclude(target_id=first.target_id)
    else:
        version = first.scenario.metric_version_id
        changed = judged.filter(scenario__metric_version_id=version)
        change = Change(versions=frozenset({version}))
        others = PassRateSummary.objects.filter(run=run, level="metric").exclude(
            metric_version_id=version
        )
    untouched = sorted(others.values_list("target_id", "level", "n_passed", "ci_low", "ci_high"))
    _rejudge(changed)
    refresh_for(run, change, n_resamples=RESAMPLES)
    scoped = _state(run)
    assert scoped == _from_scratch(run)
    # Why the scope is the whole run: rows the change did not count in moved all the same
    # (their intervals read the run-wide correlation), so a refresh of only the changed
    # model's or metric's rows would have left them stale.
    moved = sorted(others.values_list("target_id", "level", "n_passed", "ci_low", "ci_high"))
    assert [row[:3] for row in moved] == [row[:3] for row in untouched]
    assert moved != untouched


def _flip(conversations) -> None:
    """The judge now says the opposite on these conversations, every reading with it."""
    for pk, passed, present in conversations.values_list("pk", "verdict_passed", "verdict_present"):
        Conversation.objects.filter(pk=pk).update(
            verdict_passed=not passed, verdict_present=not present
        )
        Judgment.objects.filter(conversation_id=pk).update(present=not present)


@pytest.mark.parametrize("scope", ["ratings", "model", "metric"])
def test_a_refresh_draws_only_the_cells_whose_inputs_changed(run, scope, monkeypatch):
    """With blind verdicts on every rated conversation, a later change redraws the judge
    trust cells that read it and the run-wide ones, reuses every other, and the figures are
    those of a refresh from scratch."""
    # Left unofficial: the "ratings" change draws a second blind queue from the same run.
    _rate(run, "external_panel", ("present", "absent"), official=False)
    results_refresh(run=run, n_resamples=RESAMPLES)
    judged = Conversation.objects.filter(run=run, verdict_passed__isnull=False)
    rated = {c for c, _, _ in blind_verdict_ratings(run=run)}
    first = judged.filter(pk__in=rated).order_by("pk").first()
    metric = first.scenario.metric_version.metric.key
    if scope == "ratings":
        _rate(run, "external_panel", ("absent",), official=False)
    elif scope == "model":
        _flip(judged.filter(target_id=first.target_id))
    else:
        _flip(judged.filter(scenario__metric_version_id=first.scenario.metric_version_id))
    drawn: list[str] = []
    original = judge_trust.cells_compute

    def recorded(rows, members, keys, **kwargs):
        drawn.extend(keys)
        return original(rows, members, keys, **kwargs)

    monkeypatch.setattr(judge_trust, "cells_compute", recorded)
    results_refresh(run=run, n_resamples=RESAMPLES)
    monkeypatch.undo()
    cells = set(
        FigureCell.objects.filter(run=run, kind="judge_trust").values_list("key", flat=True)
    )
    assert drawn, "the change reached the blind-rated conversations"
    if scope == "model":
        assert len(drawn) < len(cells)
        assert all(str(first.target_id) in key or "target" not in key for key in drawn)
    if scope == "metric":
        assert len(drawn) < len(cells)
        assert all(metric in key or "metric" not in key for key in drawn)
    assert _state(run) == _from_scratch(run)


def test_a_refresh_with_nothing_changed_draws_nothing(run, monkeypatch):
    _rate(run, "external_panel", ("present", "absent"))
    results_refresh(run=run, n_resamples=RESAMPLES)
    before = _state(run)
    original = judge_trust.cells_compute

    def no_cell(rows, members, keys, **kwargs):
        assert not keys, "a judge trust cell was drawn again"
        return original(rows, members, keys, **kwargs)

    monkeypatch.setattr(judge_trust, "cells_compute", no_cell)
    for name in ("_robustness", "summaries_replace", "judge_repeatability", "expert_agreement"):
        monkeypatch.setattr(refresh, name, lambda *a, **k: pytest.fail("drawn again"))
    results_refresh(run=run, n_resamples=RESAMPLES)
    assert _state(run) == before


def test_ratings_book_the_figure_of_their_queue_and_widen_one_booking(run, monkeypatch, sent_tasks):
    conversations = list(Conversation.objects.filter(run=run).values_list("pk", flat=True)[:2])
    ids = tuple(conversations)
    on_ratings_changed(RatingsChanged(queue_id=0, kind="scenario", object_ids=ids))
    assert not RefreshRequest.objects.filter(run=run).exists()
    on_ratings_changed(RatingsChanged(queue_id=0, kind="judge_verdict", object_ids=ids))
    assert RefreshRequest.objects.get(run=run).figures == ["endorsement"]
    on_ratings_changed(RatingsChanged(queue_id=0, kind="external_panel", object_ids=ids))
    assert RefreshRequest.objects.get(run=run).figures == ["endorsement", "experts"]
    on_ratings_changed(RatingsChanged(queue_id=0, kind="conversation", object_ids=ids))
    assert RefreshRequest.objects.get(run=run).figures == ["endorsement", "experts", "fidelity"]
    # The booked task refreshes those three figures and nothing else.
    computed = []
    monkeypatch.setattr(
        "results.services.refresh_scope.figures_refresh",
        lambda *, run, names: computed.append(sorted(names)),
    )
    monkeypatch.setattr(refresh, "_analysis", pytest.fail)
    refresh_booked(run.pk)
    assert computed == [["endorsement", "experts", "fidelity"]]
    assert not RefreshRequest.objects.filter(run=run).exists()


def test_a_booking_of_the_whole_analysis_stays_whole(run, sent_tasks):
    from results.services.freshness import refresh_soon

    assert refresh_soon(run.pk) is True
    assert refresh_soon(run.pk, ["experts"]) is False
    assert RefreshRequest.objects.get(run=run).figures is None


def test_judge_figures_do_not_depend_on_the_order_the_server_returns_groups(run, monkeypatch):
    """A full refresh and a later one agree even when the planner's statistics changed the
    judgment GROUP BY's plan (a hash aggregate returns groups in another order)."""
    from results.services import repeatability

    before = repeatability.judge_repeatability(run, n_resamples=RESAMPLES)
    original = repeatability.numeric_rows
    monkeypatch.setattr(repeatability, "numeric_rows", lambda rows: original(rows)[::-1])
    assert repeatability.judge_repeatability(run, n_resamples=RESAMPLES) == before


def test_a_swap_re_run_finishing_books_only_the_base_runs_swap_figures(run, sent_tasks):
    from evaluations.events import RunCompleted
    from evaluations.models import EvaluationRun, SwapStudy
    from results.services.freshness import on_swap_run_completed

    swap_run = EvaluationRun.objects.create(
        name="Swap", simulator=run.simulator, judge=run.judge, status=run.status
    )
    SwapStudy.objects.create(
        base_run=run, swap_run=swap_run, swapped="judge", sample_size=1, seed=0
    )
    on_swap_run_completed(RunCompleted(run_id=swap_run.pk))
    assert sent_tasks.args("results.tasks.analysis_refresh_booked") == [(run.pk, ["swap"])]


@pytest.fixture
def synthetic():
    """The synthetic release at small scale: a calibration sample and a blind panel over every
    conversation, and a swap study re-judged by a second judge."""
    call_command(
        "generate_synthetic_dataset",
        metrics=12,
        models=3,
        no_refresh=True,
        release_version="0.0.7",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get(release__version="0.0.7", is_official=True)
    results_refresh(run=run, n_resamples=RESAMPLES)
    return run


def _flip_blind(conversations) -> None:
    """The blind panel's experts now say the opposite on these conversations; the rating's
    commit sets the run's stored page figures aside."""
    flipped = {"present": "absent", "absent": "present"}
    ratings = Rating.objects.filter(
        item__kind="external_panel", item__object_id__in=conversations.values("pk")
    )
    for rating in ratings:
        verdict = rating.answers.get("verdict")
        Rating.objects.filter(pk=rating.pk).update(
            answers={**rating.answers, "verdict": flipped.get(verdict, verdict)}
        )
    run_figures_discard(list(conversations.values_list("run_id", flat=True).distinct()))


@pytest.mark.slow(reason="generates and refreshes a synthetic release")
@pytest.mark.parametrize("scope", ["ratings", "model", "metric"])
def test_synthetic_release_refreshed_after_a_change_equals_a_refresh_from_scratch(synthetic, scope):
    run = synthetic
    assert SwapStudy.objects.filter(base_run=run).exists()
    first = Conversation.objects.filter(run=run, verdict_passed__isnull=False).order_by("pk")[0]
    version = first.scenario.metric_version_id
    of_metric = Conversation.objects.filter(run=run, scenario__metric_version_id=version)
    if scope == "ratings":
        _flip_blind(of_metric)
        change = Change(rating_kinds=frozenset({"external_panel"}))
    elif scope == "model":
        _flip(Conversation.objects.filter(run=run, target_id=first.target_id))
        change = Change(targets=frozenset({first.target_id}))
    else:
        _flip(of_metric)
        change = Change(versions=frozenset({version}))
    before = _state(run)
    refresh_for(run, change, n_resamples=RESAMPLES)
    incremental = _state(run)
    assert incremental != before
    assert incremental == _from_scratch(run)
