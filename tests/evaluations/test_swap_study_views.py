"""The swap study form: a maintainer picks an alternative judge or simulator for a run."""

import pytest
from django.urls import reverse

from evaluations.models import SwapStudy
from evaluations.services import runs
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401 - fixture
from tests.llm.factories import OfflineConfigurationFactory

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
