"""Published is immutable: once a run is official, the names it shows of its models cannot
change, through the form, the admin or the service; other settings stay editable."""

import pytest
from django.core.exceptions import ValidationError
from django.forms.models import model_to_dict
from django.urls import reverse

from evaluations.services.official import run_set_official
from llm.forms import ModelConfigurationForm
from llm.models import ModelConfiguration
from llm.services import configuration_save
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db

REFUSAL = "This configuration is part of published results (run {run})"


def _form_data(configuration: ModelConfiguration, **changes) -> dict:
    """What the edit page would post back unchanged, with `changes`."""
    fields = ModelConfigurationForm._meta.fields
    data = {k: v for k, v in model_to_dict(configuration, fields=fields).items() if v is not None}
    data["extra_params"] = "{}" if not configuration.extra_params else data["extra_params"]
    data["roles"] = list(configuration.role_assignments.values_list("role", flat=True))
    if not data.get("is_active"):
        data.pop("is_active", None)
    return {**data, **changes}


@pytest.fixture
def official(maintainer):
    run = published_run(version="4.0.0", official=False, names=("Offline frozen",))
    return run_set_official(run=run, official=True, changed_by=maintainer)


def _public_answers(client, run) -> str:
    client.logout()
    pages = [
        reverse("results-api:run-detail", args=[run.pk]),
        reverse("results-api:run-results", args=[run.pk]),
        reverse("evaluations:run-export", args=[run.pk, "csv"]),
    ]
    return "".join(
        b"".join(r.streaming_content).decode() if r.streaming else r.content.decode()
        for r in (client.get(page) for page in pages)
    )


def test_making_a_run_official_freezes_every_model_it_used(official):
    target = official.targets.get()
    for configuration in (target, official.judge, official.simulator):
        configuration.refresh_from_db()
        assert configuration.published_in_run == official.pk


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "Renamed target"), ("model_id", "another-model"), ("model_line", "Other line")],
)
def test_renaming_a_published_model_is_refused_and_no_public_answer_changes(
    client, client_for, maintainer, official, field, value
):
    target = official.targets.get()
    before = _public_answers(client, official)
    assert target.name in before
    response = client_for(maintainer).post(
        reverse("llm:configuration-update", args=[target.pk]), _form_data(target, **{field: value})
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert REFUSAL.format(run=official.pk) in errors[field][0], errors
    assert value in response.content.decode()  # re-rendered with the maintainer's text kept
    target.refresh_from_db()
    assert getattr(target, field) != value
    after = _public_answers(client, official)
    assert value not in after
    assert target.name in after


def test_the_service_and_the_admin_refuse_it_too(admin_client, official):
    target = official.targets.get()
    stale = ModelConfiguration.objects.get(pk=target.pk)
    stale.name = "Renamed in a shell"
    with pytest.raises(ValidationError) as refused:
        configuration_save(configuration=stale, roles=["target"])
    assert "name" in refused.value.message_dict
    data = {
        **_form_data(target, name="Renamed in the admin"),
        "role_assignments-TOTAL_FORMS": "0",
        "role_assignments-INITIAL_FORMS": "0",
    }
    response = admin_client.post(
        reverse("admin:llm_modelconfiguration_change", args=[target.pk]), data
    )
    assert response.status_code == 200
    assert REFUSAL.format(run=official.pk) in response.content.decode()
    target.refresh_from_db()
    assert target.name.startswith("Offline frozen")


def test_other_settings_of_a_published_model_stay_editable(client_for, maintainer, official):
    target = official.targets.get()
    response = client_for(maintainer).post(
        reverse("llm:configuration-update", args=[target.pk]),
        _form_data(target, description="Retired after 4.0.0", is_active=""),
    )
    assert response.status_code == 302, response.context["form"].errors
    target.refresh_from_db()
    assert (target.description, target.is_active) == ("Retired after 4.0.0", False)


def test_an_unpublished_model_can_be_renamed(client_for, maintainer):
    run = published_run(version="4.1.0", official=False, names=("Offline draft",))
    target = run.targets.get()
    response = client_for(maintainer).post(
        reverse("llm:configuration-update", args=[target.pk]),
        _form_data(target, name="Offline draft, renamed"),
    )
    assert response.status_code == 302, response.context["form"].errors
    target.refresh_from_db()
    assert (target.name, target.published_in_run) == ("Offline draft, renamed", None)


def test_withdrawing_a_run_leaves_its_names_frozen(maintainer, official):
    run_set_official(run=official, official=False, changed_by=maintainer)
    target = official.targets.get()
    target.name = "Renamed after withdrawal"
    with pytest.raises(ValidationError):
        configuration_save(configuration=target, roles=["target"])
