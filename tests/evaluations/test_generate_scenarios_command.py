"""`manage.py generate_scenarios`: the command line writes the scenarios a run lacks, as the
web's "Generate missing scenarios" does."""

import io

import pytest
from django.core.management import CommandError, call_command

from core.exceptions import ApplicationError
from evaluations import tasks
from evaluations.models import Scenario, ScenarioStatus
from evaluations.selectors import scenario_set_complete
from evaluations.services import runs
from llm.models import LLMCall, ModelRole
from tests.evaluations.factories import current_version
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft_run():
    writer = OfflineConfigurationFactory(name="Writer")
    ModelRoleAssignmentFactory(role=ModelRole.SCENARIO_WRITER, configuration=writer)
    metrics = [MetricFactory(), MetricFactory(polarity="negative")]
    release = release_with("1.0.0", metrics, publish=True)
    return runs.run_create(
        name="Needs scenarios",
        release=release,
        targets=[OfflineConfigurationFactory()],
        simulator=OfflineConfigurationFactory(),
        judge=OfflineConfigurationFactory(),
    ), metrics


def test_launch_names_the_command_and_the_command_writes_what_the_web_writes(draft_run):
    run, (first, second) = draft_run
    with pytest.raises(ApplicationError, match=f"generate_scenarios --run {run.pk}"):
        runs.run_launch(run=run, dispatch=False)
    # The web's way, for one metric: the task its button queues.
    tasks.llm_generate_scenarios(current_version(first).pk)
    out = io.StringIO()
    call_command("generate_scenarios", f"--run={run.pk}", stdout=out)
    text = out.getvalue()
    assert "1 of 2 metric versions lack a complete set" in text  # the first is left alone
    assert f"{second.key}: 6 scenarios." in text
    assert first.key + ":" not in text
    for metric in (first, second):
        assert scenario_set_complete(metric_version=current_version(metric))
    web = Scenario.objects.filter(metric_version=current_version(first))
    cli = Scenario.objects.filter(metric_version=current_version(second))
    fields = ("status", "is_offline", "generation")
    assert {tuple(getattr(s, f) for f in fields) for s in cli} == {
        tuple(getattr(s, f) for f in fields) for s in web
    }
    assert {s.status for s in cli} == {ScenarioStatus.ACTIVE}
    written_by = LLMCall.objects.filter(purpose__startswith="evaluations.scenario_")
    assert set(written_by.values_list("configuration__name", flat=True)) == {"Writer"}
    # Now the run launches; a second pass writes nothing.
    runs.run_launch(run=run, dispatch=False)
    again = io.StringIO()
    call_command("generate_scenarios", "--release=1.0.0", stdout=again)
    assert "0 of 2 metric versions" in again.getvalue()


def test_unknown_names_are_reported(draft_run):
    with pytest.raises(CommandError, match="Unknown metric keys: NOPE"):
        call_command("generate_scenarios", "--metrics=NOPE", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no run 999999"):
        call_command("generate_scenarios", "--run=999999", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no release 9.9.9"):
        call_command("generate_scenarios", "--release=9.9.9", stdout=io.StringIO())


def test_without_a_scenario_writer_the_command_says_so(draft_run):
    run, (first, _second) = draft_run
    ModelRoleAssignmentFactory._meta.model.objects.filter(role=ModelRole.SCENARIO_WRITER).delete()
    with pytest.raises(CommandError, match=first.key):
        call_command("generate_scenarios", f"--metrics={first.key}", stdout=io.StringIO())
    assert not Scenario.objects.exists()
