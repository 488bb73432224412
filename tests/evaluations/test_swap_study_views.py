"""The swap study form: a maintainer picks an alternative judge or simulator for a run."""

import pytest
from django.urls import reverse

from evaluations.models import SwapStudy
from evaluations.services import runs
from evaluations.services.swap import swap_study_create
from llm.models import ModelRole
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401 - fixture
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def base_run(offline_release):  # noqa: F811
    run = offline_run(offline_release, turns=1, judgments_per_conversation=1)
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_maintainer_submits_the_form_and_lands_on_the_re_run_plan(client_for, maintainer, base_run):
    client = client_for(maintainer)
    page = client.get(reverse("evaluations:run-detail", kwargs={"pk": base_run.pk}))
    assert reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk}) in page.text
    strict = OfflineConfigurationFactory(
        name="Strict <b>judge</b>", extra_params={"offline_profile": "strict"}
    )
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=strict)
    form = client.get(reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk}))
    assert "Strict &lt;b&gt;judge&lt;/b&gt;" in form.text  # names are escaped
    response = client.post(
        reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk}),
        {"judge": strict.pk, "simulator": "", "sample_size": 4, "seed": 9},
    )
    study = SwapStudy.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("evaluations:run-detail", kwargs={"pk": study.swap_run_id})
    assert (study.base_run, study.swapped, study.seed, study.sample_size) == (
        base_run,
        "judge",
        9,
        4,
    )
    assert study.created_by == maintainer
    plan = client.get(response.url)
    assert "8 conversations" in plan.text  # 4 sampled scenarios × 2 targets
    assert 'data-testid="swap-study-note"' in plan.text
    assert "drawn with seed 9" in plan.text
    # Launching is the ordinary run action.
    client.post(
        reverse("evaluations:run-action", kwargs={"pk": study.swap_run_id, "action": "launch"})
    )
    study.swap_run.refresh_from_db()
    assert study.swap_run.status == "running"


def test_form_says_when_nothing_is_swapped(client_for, maintainer, base_run):
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=base_run.judge)
    client = client_for(maintainer)
    response = client.post(
        reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk}),
        {"judge": base_run.judge_id, "sample_size": 4},
    )
    assert response.status_code == 200
    assert "nothing would be swapped" in response.text
    assert not SwapStudy.objects.exists()


def test_only_maintainers_create_studies(client_for, researcher, base_run):
    response = client_for(researcher).post(
        reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk}), {"sample_size": 4}
    )
    assert response.status_code == 403
    assert not SwapStudy.objects.exists()


def test_form_offers_only_configurations_with_the_role(client_for, maintainer, base_run):
    judge = OfflineConfigurationFactory(name="Panel judge")
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, configuration=judge)
    simulator = OfflineConfigurationFactory(name="Second simulator")
    ModelRoleAssignmentFactory(role=ModelRole.USER_SIMULATOR, configuration=simulator)
    drafter = OfflineConfigurationFactory(name="The drafter")
    ModelRoleAssignmentFactory(role=ModelRole.METRIC_DRAFTER, configuration=drafter)
    client = client_for(maintainer)
    url = reverse("evaluations:swap-study-create", kwargs={"pk": base_run.pk})
    form = client.get(url).context["form"]
    assert list(form.fields["judge"].queryset) == [judge]
    assert list(form.fields["simulator"].queryset) == [simulator]
    # The targets and the scenario writer are not offered either.
    page = client.get(url).text
    for other in (drafter, *base_run.targets.all()):
        assert f'value="{other.pk}"' not in page
    # A configuration without the role is refused when posted by hand.
    response = client.post(url, {"judge": drafter.pk, "sample_size": 4})
    assert response.status_code == 200
    assert response.context["form"].errors["judge"]
    assert not SwapStudy.objects.exists()


@pytest.mark.slow(reason="runs a base run and its swap re-run to completion on the offline models")
def test_a_swap_run_offers_neither_official_nor_swap_and_refuses_both(
    client_for, maintainer, base_run
):
    judge = OfflineConfigurationFactory(extra_params={"offline_profile": "strict"})
    study = swap_study_create(base_run=base_run, judge=judge, sample_size=2, seed=1)
    runs.run_launch(run=study.swap_run, dispatch=False)
    runs.run_process_inline(run_id=study.swap_run_id)
    swap_run = study.swap_run
    swap_run.refresh_from_db()
    assert swap_run.status == "completed"
    client = client_for(maintainer)
    detail = reverse("evaluations:run-detail", kwargs={"pk": swap_run.pk})
    page = client.get(detail).text
    assert 'data-testid="swap-study-note"' in page
    assert 'data-testid="run-public"' in page
    assert "Make official (public)" not in page
    assert 'data-testid="official-form"' not in page
    assert 'data-testid="swap-study-link"' not in page
    # The base run keeps both.
    base_page = client.get(reverse("evaluations:run-detail", kwargs={"pk": base_run.pk})).text
    assert 'data-testid="official-form"' in base_page
    assert 'data-testid="swap-study-link"' in base_page

    official = client.post(
        reverse("evaluations:run-official", kwargs={"pk": swap_run.pk}), {"official": "1"}
    )
    assert official.status_code == 302
    swap_run.refresh_from_db()
    assert not swap_run.is_official
    swap_url = reverse("evaluations:swap-study-create", kwargs={"pk": swap_run.pk})
    for response in (
        client.get(swap_url),
        client.post(swap_url, {"judge": base_run.judge_id, "sample_size": 2}),
    ):
        assert response.status_code == 302
        assert response.url == detail
    assert SwapStudy.objects.count() == 1
    shown = client.get(detail).text
    assert "never as a release" in shown
    assert "itself a swap study" in shown
