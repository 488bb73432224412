"""The new-run form: grouped metric checkboxes, target-role configurations, role defaults."""

import pytest
from django.urls import reverse

from evaluations.forms import RunCreateForm
from evaluations.models import EvaluationRun
from llm.models import ModelRole
from tests.evaluations.factories import current_version
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def models():
    target = OfflineConfigurationFactory(name="Target A")
    simulator = OfflineConfigurationFactory(name="Sim")
    judge = OfflineConfigurationFactory(name="Judge")
    ModelRoleAssignmentFactory(role=ModelRole.TARGET, configuration=target)
    ModelRoleAssignmentFactory(
        role=ModelRole.USER_SIMULATOR, configuration=simulator, is_default=True
    )
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=judge, is_default=True)
    return {"target": target, "simulator": simulator, "judge": judge}


def run_data(models, name: str, metric_versions: list[int] | None = None, **fields) -> dict:
    """The form's post for a run of `metric_versions` (none ticked: left out) on the fixture's
    models; `fields` add to it or change it."""
    return {
        "name": name,
        **({"metric_versions": metric_versions} if metric_versions is not None else {}),
        "targets": [models["target"].pk],
        "simulator": models["simulator"].pk,
        "judge": models["judge"].pk,
        "turns": 4,
        "replicates": 1,
        "judgments_per_conversation": 1,
        **fields,
    }


def test_targets_list_only_target_role_configurations_and_helpers_default(models):
    form = RunCreateForm()
    assert list(form.fields["targets"].queryset) == [models["target"]]
    assert form.initial["simulator"] == models["simulator"].pk
    assert form.initial["judge"] == models["judge"].pk
    bound = RunCreateForm(run_data(models, "x", targets=[models["simulator"].pk]))
    assert "targets" in bound.errors  # a non-target configuration is refused


def test_metrics_are_checkboxes_grouped_by_subarea_with_select_all(client_for, maintainer, models):
    learning = MetricFactory(subarea_slugs=["learning-skill-development"])
    social = MetricFactory(subarea_slugs=["social-relationships"])
    page = client_for(maintainer).get(reverse("evaluations:run-create")).content.decode()
    assert "<select" not in page.split('data-testid="metric-groups"')[1].split("</fieldset>")[0]
    groups = page.split("data-metric-group")[1:]
    learning_group = next(g for g in groups if "Learning" in g.split("</summary>")[0])
    assert "Select all in Psychological · Learning" in learning_group
    assert f'value="{current_version(learning).pk}"' in learning_group
    assert f'value="{current_version(social).pk}"' not in learning_group
    assert "js/run-form.js" in page
    assert "<script>" not in page  # no inline script (Content-Security-Policy)
    assert 'class="select form-select"' in page  # crispy-bootstrap5 widgets
    assert f'<option value="{models["judge"].pk}" selected>Judge (offline demo model)' in page


def test_a_ticked_subset_becomes_the_runs_metric_versions(client_for, maintainer, models):
    chosen = current_version(MetricFactory())
    current_version(MetricFactory())
    response = client_for(maintainer).post(
        reverse("evaluations:run-create"), run_data(models, "Subset", [chosen.pk])
    )
    assert response.status_code == 302
    from evaluations.models import EvaluationRun

    assert list(EvaluationRun.objects.get(name="Subset").metric_versions.all()) == [chosen]


def test_a_release_run_from_the_form_refuses_a_metric_outside_it(client_for, maintainer, models):
    inside = MetricFactory()
    release = release_with("2.0.0", [inside])
    outsider = current_version(MetricFactory())
    data = run_data(
        models,
        "Release subset",
        [current_version(inside).pk, outsider.pk],
        release=release.pk,
    )
    response = client_for(maintainer).post(reverse("evaluations:run-create"), data)
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Release 2.0.0 does not contain {outsider.metric.key} v1" in page
    assert page.count("does not contain") == 1
    assert not EvaluationRun.objects.exists()
    data["metric_versions"] = [current_version(inside).pk]
    response = client_for(maintainer).post(reverse("evaluations:run-create"), data)
    assert response.status_code == 302
    assert list(EvaluationRun.objects.get().metric_versions.all()) == [current_version(inside)]


def test_simulator_and_judge_list_their_role_first_and_the_rest_apart(
    client_for, maintainer, models
):
    drafter = OfflineConfigurationFactory(name="Drafter")
    ModelRoleAssignmentFactory(role=ModelRole.METRIC_DRAFTER, configuration=drafter)
    page = client_for(maintainer).get(reverse("evaluations:run-create")).content.decode()
    judge_select = page.split('name="judge"')[1].split("</select>")[0]
    groups = judge_select.split("<optgroup")[1:]
    assert [g.split('label="')[1].split('"')[0] for g in groups] == [
        "Judge role",
        "Other configurations",
    ]
    assert "Judge (offline demo model)" in groups[0]
    assert "Drafter" not in groups[0]
    assert "Drafter" in groups[1]
    assert "Target A" in groups[1]
    simulator_select = page.split('name="simulator"')[1].split("</select>")[0]
    assert "Sim (offline demo model)" in simulator_select.split("<optgroup")[1]
    # Any active configuration may still be chosen.
    form = RunCreateForm(run_data(models, "x", release="", simulator=drafter.pk, judge=drafter.pk))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["judge"] == drafter


def test_the_form_seats_further_judges_as_a_panel(client_for, maintainer, models):
    strict = OfflineConfigurationFactory(name="Strict", extra_params={"offline_profile": "strict"})
    noisy = OfflineConfigurationFactory(name="Noisy", extra_params={"offline_profile": "noisy"})
    for judge in (strict, noisy):
        ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=judge, is_default=False)
    chosen = current_version(MetricFactory())
    data = run_data(
        models,
        "Panel",
        [chosen.pk],
        further_judges=[models["judge"].pk, strict.pk],
        judgments_per_conversation=3,
    )
    client = client_for(maintainer)
    refused = client.post(reverse("evaluations:run-create"), data)
    assert "already sits on the panel" in refused.content.decode()
    data["further_judges"] = [strict.pk, noisy.pk]
    response = client.post(reverse("evaluations:run-create"), data)
    assert response.status_code == 302
    run = EvaluationRun.objects.get(name="Panel")
    assert run.judge == models["judge"]
    seats = list(run.panel_judges.values_list("position", "judge__name", "repetitions"))
    assert seats == [(1, "Noisy", 3), (2, "Strict", 3)]  # in the list's order
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="run-panel"' in page
    assert "a panel of 3 judges" in page


def test_a_run_without_further_judges_has_its_one_judge(client_for, maintainer, models):
    chosen = current_version(MetricFactory())
    client = client_for(maintainer)
    response = client.post(
        reverse("evaluations:run-create"),
        run_data(models, "Alone", [chosen.pk], judgments_per_conversation=3),
    )
    run = EvaluationRun.objects.get(name="Alone")
    assert not run.panel_judges.exists()
    assert 'data-testid="run-panel"' not in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize("ticked", [True, False])
def test_judge_by_batch_reaches_the_run(client_for, maintainer, models, ticked):
    chosen = current_version(MetricFactory())
    data = run_data(models, "Batched", [chosen.pk], judgments_per_conversation=3)
    client = client_for(maintainer)
    assert 'name="use_batch"' in client.get(reverse("evaluations:run-create")).content.decode()
    client.post(
        reverse("evaluations:run-create"), {**data, **({"use_batch": "on"} if ticked else {})}
    )
    assert EvaluationRun.objects.get(name="Batched").use_batch is ticked


def _option(page: str, version_pk: int) -> str:
    """The markup of one metric option of the run form."""
    start = page.index(f'name="metric_versions" value="{version_pk}"')
    return page[start : page.index("</div>", start)]


def test_each_metric_says_which_releases_hold_it(client_for, maintainer, models):
    inside = MetricFactory()
    release = release_with("2.0.0", [inside])
    outsider = current_version(MetricFactory())
    client = client_for(maintainer)
    page = client.get(reverse("evaluations:run-create")).content.decode()
    held = _option(page, current_version(inside).pk)
    assert "in release 2.0.0" in held
    assert f'data-release-list="{release.pk}"' in held
    assert "in no release" in _option(page, outsider.pk)
    # Nothing chosen yet: no metric is marked as outside a release.
    assert "data-outside-release hidden" in _option(page, outsider.pk)
    # Submitted with the release, the form comes back marking the metric it does not hold.
    response = client.post(
        reverse("evaluations:run-create"),
        {
            "name": "Release subset",
            "release": release.pk,
            "metric_versions": [outsider.pk],
            "targets": [models["target"].pk],
            "simulator": models["simulator"].pk,
            "judge": models["judge"].pk,
            "turns": 4,
            "replicates": 1,
            "judgments_per_conversation": 1,
        },
    )
    page = response.content.decode()
    assert "data-outside-release hidden" not in _option(page, outsider.pk)
    assert "data-outside-release hidden" in _option(page, current_version(inside).pk)


def test_a_draft_shows_its_plan_without_progress_or_downloads(client_for, maintainer, models):
    metric = MetricFactory()
    release = release_with("2.0.0", [metric])
    run = EvaluationRun.objects.create(
        name="Draft",
        release=release,
        simulator=models["simulator"],
        judge=models["judge"],
    )
    run.targets.set([models["target"]])
    client = client_for(maintainer)
    page = client.get(reverse("evaluations:run-detail", args=[run.pk])).content.decode()
    assert "Before launch" in page
    assert 'data-testid="run-progress-draft"' in page
    assert "remaining of" not in page
    assert 'data-testid="run-exports"' not in page
    assert reverse("evaluations:run-export", args=[run.pk, "csv"]) not in page
    run.status = "running"
    run.save(update_fields=["status"])
    page = client.get(reverse("evaluations:run-detail", args=[run.pk])).content.decode()
    assert "remaining of 0" in page
    assert 'data-testid="run-exports"' in page
