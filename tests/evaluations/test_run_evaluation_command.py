"""`manage.py run_evaluation`: plan, launch inline or on workers, resume, watch."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun
from evaluations.services import runs
from evaluations.services.run_setup import run_create_from_names
from llm.models import ModelRole
from results.models import PassRateSummary, RunAnalysis
from results.services.refresh import results_refresh
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401 - fixture
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline_models():
    simulator = OfflineConfigurationFactory(name="Sim")
    judge = OfflineConfigurationFactory(name="Judge")
    ModelRoleAssignmentFactory(role=ModelRole.USER_SIMULATOR, configuration=simulator)
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=judge)
    OfflineConfigurationFactory(name="Careful", extra_params={"offline_profile": "careful"})
    OfflineConfigurationFactory(name="Terse", extra_params={"offline_profile": "terse"})


def test_inline_run_shows_the_plan_then_completes(
    offline_release,  # noqa: F811
    offline_models,
    django_capture_on_commit_callbacks,
):
    out = io.StringIO()
    # The command commits as it goes; the test's transaction holds the commits back.
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "run_evaluation",
            "--release=1.0.0",
            "--targets=Careful,Terse",
            "--turns=2",
            "--judgments=1",
            "--yes",
            "--inline",
            stdout=out,
        )
    text = out.getvalue()
    assert "24 conversations" in text  # 2 metrics × 6 scenarios × 2 targets
    assert "offline demo models" in text
    run = EvaluationRun.objects.get()
    assert run.status == "completed"
    assert run.conversations_completed == 24
    assert f"Run {run.pk} is completed" in text
    # No worker ran: the command stored the figures itself before it returned.
    assert RunAnalysis.objects.filter(run=run).exists()
    assert PassRateSummary.objects.filter(run=run).exists()

    watched = io.StringIO()
    call_command("run_evaluation", f"--run={run.pk}", "--watch", stdout=watched)
    assert "24 conversations done" in watched.getvalue()


@pytest.mark.slow(reason="runs and refreshes a whole offline run to see both states of its page")
def test_run_page_links_to_results_only_once_they_are_stored(
    client_for,
    researcher,
    offline_release,  # noqa: F811
):
    run = offline_run(offline_release, turns=1, judgments_per_conversation=1)
    runs.run_launch(run=run, dispatch=False)
    # As on workers: the refresh is queued, and no worker has taken it up yet.
    runs.run_process_inline(run_id=run.pk)
    client = client_for(researcher)
    page = client.get(reverse("evaluations:run-detail", args=[run.pk])).content.decode()
    assert 'data-testid="run-figures-pending"' in page
    assert 'data-testid="run-explore-link"' not in page
    assert client.get(reverse("results:explore"), {"run": run.pk}).status_code == 404
    results_refresh(run=run)
    page = client.get(reverse("evaluations:run-detail", args=[run.pk])).content.decode()
    assert 'data-testid="run-figures-pending"' not in page
    assert 'data-testid="run-explore-link"' in page
    assert client.get(reverse("results:explore"), {"run": run.pk}).status_code == 200


def test_no_anchors_and_grading_options_reach_the_run(
    offline_release,  # noqa: F811
    offline_models,
    monkeypatch,
):
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    call_command(
        "run_evaluation",
        "--release=1.0.0",
        "--targets=Careful",
        "--no-anchors",
        "--rubric-grading=all_in_one",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.use_anchors is False
    assert run.rubric_grading == "all_in_one"


def test_batch_mode_reaches_the_run_and_is_refused_inline(
    offline_release,  # noqa: F811
    offline_models,
    monkeypatch,
):
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(CommandError, match="--batch needs Celery workers and beat"):
        call_command(
            "run_evaluation", "--release=1.0.0", "--targets=Careful", "--batch", "--inline"
        )
    assert not EvaluationRun.objects.exists()
    call_command(
        "run_evaluation", "--release=1.0.0", "--targets=Careful", "--batch", stdout=io.StringIO()
    )
    assert EvaluationRun.objects.get().use_batch is True


def test_declining_the_confirmation_leaves_a_draft(offline_release, offline_models, monkeypatch):  # noqa: F811
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    out = io.StringIO()
    call_command("run_evaluation", "--release=1.0.0", "--targets=Careful", stdout=out)
    assert "Not launched" in out.getvalue()
    assert EvaluationRun.objects.get().status == "draft"


def test_unknown_names_are_reported(offline_release, offline_models):  # noqa: F811
    with pytest.raises(CommandError, match="Unknown target configurations: Nope"):
        call_command("run_evaluation", "--release=1.0.0", "--targets=Careful,Nope", "--yes")
    with pytest.raises(CommandError, match="no release 9.9.9"):
        call_command("run_evaluation", "--release=9.9.9", "--targets=Careful", "--yes")


def test_retry_failed_reruns_failed_conversations_from_the_command_line(
    offline_release,  # noqa: F811
    offline_models,
    fake_openai,
):
    from tests.fake_openai import Behaviour
    from tests.llm.factories import ModelConfigurationFactory

    ModelConfigurationFactory(name="Flaky", base_url=fake_openai.base_url)
    fake_openai.responder = lambda request: Behaviour(status=400)  # refused: not retried
    options = ["--release=1.0.0", "--targets=Flaky", "--turns=1", "--judgments=1", "--yes"]
    call_command("run_evaluation", *options, "--inline", stdout=io.StringIO())
    run = EvaluationRun.objects.get()
    assert run.conversations_failed == 12
    assert run.conversations_completed == 0

    fake_openai.responder = lambda request: "A careful, kind reply."
    out = io.StringIO()
    call_command("run_evaluation", f"--retry-failed={run.pk}", "--inline", stdout=out)
    assert f"Run {run.pk}: 12 failed conversations and rubric replies queued." in out.getvalue()
    run.refresh_from_db()
    assert (run.status, run.conversations_completed, run.conversations_failed) == (
        "completed",
        12,
        0,
    )
    with pytest.raises(CommandError, match="No conversation of this run has failed"):
        call_command("run_evaluation", f"--retry-failed={run.pk}", "--inline")


def test_the_command_line_runs_a_release_or_chosen_metrics_never_both(
    offline_release,  # noqa: F811
    offline_models,
):
    outsider = MetricFactory()
    with pytest.raises(CommandError, match="--metrics: not allowed with argument --release"):
        call_command(
            "run_evaluation",
            "--release=1.0.0",
            f"--metrics={outsider.key}",
            "--targets=Careful",
            "--yes",
            stdout=io.StringIO(),
        )
    with pytest.raises(ApplicationError, match=f"does not contain {outsider.key} v1"):
        run_create_from_names(
            release_version="1.0.0", metric_keys=[outsider.key], target_names=["Careful"]
        )
    assert not EvaluationRun.objects.exists()
