"""Swap studies end to end on the offline provider: sample, re-run or re-judge, figures."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from core.exceptions import ApplicationError
from evaluations.models import Conversation, SwapStudy
from evaluations.services import runs
from evaluations.services.official import run_set_official
from evaluations.services.swap import swap_study_create
from results.models import RunAnalysis
from results.services.refresh import results_refresh
from results.services.swap_study import swap_study_figures, swap_verdict_text
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401 - fixture
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.openapi_check import assert_matches_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def base_run(offline_release):  # noqa: F811
    run = offline_run(offline_release, turns=2)
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    return run


def _finish(study: SwapStudy) -> None:
    runs.run_launch(run=study.swap_run, dispatch=False)
    runs.run_process_inline(run_id=study.swap_run_id)
    study.swap_run.refresh_from_db()


def test_judge_swap_rejudges_the_sampled_conversations(base_run):
    strict = OfflineConfigurationFactory(extra_params={"offline_profile": "strict"})
    study = swap_study_create(base_run=base_run, judge=strict, sample_size=5, seed=3)
    assert study.swapped == "judge"
    assert study.rejudged
    assert len(study.scenario_ids) == 5
    # The same seed draws the same sample.
    from evaluations.services.swap import swap_sample

    assert swap_sample(base_run=base_run, size=5, seed=3) == study.scenario_ids
    _finish(study)
    swap = study.swap_run
    assert swap.status == "completed"
    assert swap.conversations_total == 5 * 2  # sampled scenarios × targets
    copies = Conversation.objects.filter(run=swap)
    assert set(copies.values_list("scenario_id", flat=True)) == set(study.scenario_ids)
    # Re-judged, not re-simulated: the turns are the base run's, word for word.
    for copy in copies:
        original = base_run.conversations.get(
            scenario_id=copy.scenario_id, target_id=copy.target_id, replicate=copy.replicate
        )
        assert list(copy.turns.values_list("assistant_text", flat=True)) == list(
            original.turns.values_list("assistant_text", flat=True)
        )
        assert set(copy.judgments.values_list("judge_id", flat=True)) == {strict.pk}

    figures = swap_study_figures(study, n_resamples=200)
    assert set(figures["polarities"]) == {"positive", "negative"}
    for block in figures["polarities"].values():
        assert len(block["models"]) == 2
        for line in block["models"]:
            shift = line["shift"]
            if shift["low"] is not None:
                assert shift["low"] <= shift["value"] <= shift["high"]
            else:
                assert shift["n_clusters"] < 2  # one base scenario: no spread to resample
            # A strict judge only fails more replies: never a higher pass rate.
            assert line["swap_rate"] <= line["base_rate"]
            assert shift["value"] == pytest.approx(line["swap_rate"] - line["base_rate"])
            grade_moved = line["base_grade"] != line["swap_grade"]
            if grade_moved:
                assert line["held"] is False
            elif shift["low"] is None:
                assert line["held"] is None
            else:
                narrow = shift["low"] > -0.05 and shift["high"] < 0.05
                assert line["held"] is (True if narrow else None)
        flips = block["flip_share"]
        assert flips["n"] == sum(
            1
            for c in copies
            if c.scenario.metric_version.polarity == block_polarity(figures, block)
        )
        assert block["single_vs_majority"]["swap"]["n"] > 0


def block_polarity(figures, block):
    return next(p for p, b in figures["polarities"].items() if b is block)


def test_simulator_swap_simulates_the_sample_again(base_run):
    simulator = OfflineConfigurationFactory(name="Other simulator")
    study = swap_study_create(base_run=base_run, simulator=simulator, sample_size=3, seed=1)
    assert study.swapped == "simulator"
    assert not study.rejudged
    _finish(study)
    assert study.swap_run.status == "completed"
    assert study.swap_run.simulator == simulator
    assert study.swap_run.judge_id == base_run.judge_id
    assert study.swap_run.conversations_total == 3 * 2
    figures = swap_study_figures(study, n_resamples=100)
    assert figures["swapped"] == "simulator"
    # A sample is never a release's results.
    with pytest.raises(ApplicationError, match="swap study"):
        run_set_official(run=study.swap_run, official=True, changed_by=None)


def test_a_study_needs_something_swapped_and_a_finished_base(base_run, offline_release):  # noqa: F811
    with pytest.raises(ApplicationError, match="nothing would be swapped"):
        swap_study_create(base_run=base_run, judge=base_run.judge, sample_size=3)
    draft = offline_run(offline_release)
    with pytest.raises(ApplicationError, match="completed run"):
        swap_study_create(base_run=draft, judge=OfflineConfigurationFactory(), sample_size=3)


@pytest.mark.slow(reason="runs a base run and its judge swap inline through the command")
def test_command_runs_a_judge_swap_inline_and_prints_the_figures(
    base_run, client, maintainer, django_assert_max_num_queries
):
    OfflineConfigurationFactory(name="Strict judge", extra_params={"offline_profile": "strict"})
    out = io.StringIO()
    call_command(
        "run_swap_study",
        f"--run={base_run.pk}",
        "--judge=Strict judge",
        "--sample=12",
        "--seed=4",
        "--yes",
        "--inline",
        stdout=out,
    )
    text = out.getvalue()
    study = SwapStudy.objects.get()
    assert study.seed == 4
    assert study.sample_size == 12
    assert f"Swap study {study.pk}: judge swapped; 12 scenarios drawn with seed 4" in text
    assert "24 conversations" in text  # the plan: 12 scenarios × 2 targets
    assert f"Run {study.swap_run_id} is completed" in text
    assert "Kendall's tau" in text
    assert "single vs majority rho" in text
    # The figures are in the base run's analysis, where the methodology page and API read them.
    stored = base_run.analysis.robustness["swap"]
    assert [s["study"] for s in stored] == [study.pk]
    assert set(stored[0]["polarities"]) == {"positive", "negative"}

    # Public once the base run is official: the methodology page's section and the API. Its
    # summaries are written when a run completes (an event after commit, which tests skip).
    results_refresh(run=base_run, n_resamples=200)
    stored = RunAnalysis.objects.get(run=base_run).robustness["swap"]
    run_set_official(run=base_run, official=True, changed_by=maintainer)
    url = reverse("results:methodology") + f"?run={base_run.pk}"
    with django_assert_max_num_queries(21):  # the public pages' ceiling; the section reads none
        page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert f'data-testid="swap-study-{study.pk}"' in html
    assert "Strict judge" in html
    assert 'data-testid="held-rule"' in html
    lines = [line for block in stored[0]["polarities"].values() for line in block["models"]]
    for line in lines:
        # Each line says in words what happened to the grade, and the words match the figures.
        assert f'data-verdict="{line["verdict"]}"' in html
        assert escape(swap_verdict_text(line)) in html
        if line["base_grade"] != line["swap_grade"]:
            assert f"grade moved from {line['base_grade']} to {line['swap_grade']}" in html
            assert f"grade moved from {line['base_grade']} to {line['swap_grade']}" in text
    assert html.count('data-testid="held"') == len(lines)
    for polarity in stored[0]["polarities"]:
        assert f'data-testid="swap-{study.pk}-{polarity}"' in html
    # Each model's label says whether its grades held, per polarity.
    target = base_run.targets.order_by("pk").first()
    # The label's ceiling: one read more than the metric page's, the run's languages (its
    # language switch).
    with django_assert_max_num_queries(22):
        label = client.get(reverse("results:label", args=[target.pk]) + f"?run={base_run.pk}")
    label_html = label.content.decode()
    mine = [line for line in lines if line["target"] == target.pk]
    assert label_html.count('data-testid="label-swap-line"') == len(mine) == 2
    with django_assert_max_num_queries(12):  # the public API's ceiling
        response = client.get(reverse("results-api:run-swap-studies", args=[base_run.pk]))
    assert_matches_schema(response)
    api = response.json()
    assert api["run"] == base_run.pk
    (published,) = api["studies"]
    assert published["swapped"] == "judge"
    assert published["seed"] == 4
    assert published["polarities"]["negative"]["models"][0]["shift"]["unit"] == "difference"
    assert "full grade band" in published["held_rule"]
    for line in published["polarities"]["negative"]["models"]:
        assert line["verdict_text"] == swap_verdict_text(line)


def test_command_refuses_unknown_names(base_run):
    with pytest.raises(CommandError, match="No model configuration"):
        call_command("run_swap_study", f"--run={base_run.pk}", "--judge=Nobody", "--yes")
