import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.exceptions import ApplicationError
from llm.gateway import chat_for_role, structured_for_role
from llm.models import ModelConfiguration, ModelRole, ModelRoleAssignment
from llm.selectors import configuration_for_role, configurations_for_role
from llm.services import configuration_save
from tests.llm.factories import (
    ModelConfigurationFactory,
    ModelRoleAssignmentFactory,
    OfflineConfigurationFactory,
)

pytestmark = pytest.mark.django_db


def test_missing_role_configuration_gives_a_clear_message():
    with pytest.raises(ApplicationError) as caught:
        configuration_for_role(ModelRole.JUDGE)
    assert caught.value.message == (
        "No model is configured for the judge role; a maintainer can assign one under "
        "Model configurations."
    )


def test_switched_off_default_is_reported():
    ModelRoleAssignmentFactory(
        role=ModelRole.JUDGE, configuration=ModelConfigurationFactory(name="Old", is_active=False)
    )
    with pytest.raises(ApplicationError, match=r"default model for the judge role \(Old\)"):
        configuration_for_role(ModelRole.JUDGE)


def test_role_resolves_to_the_default_and_targets_can_be_many():
    judge = ModelRoleAssignmentFactory(role=ModelRole.JUDGE).configuration
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE, is_default=False)
    targets = ModelConfigurationFactory.create_batch(3)
    for target in targets:
        ModelRoleAssignmentFactory(role=ModelRole.TARGET, configuration=target, is_default=False)
    assert configuration_for_role(ModelRole.JUDGE) == judge
    assert set(configurations_for_role(ModelRole.TARGET)) == set(targets)


def test_database_allows_one_default_per_role():
    ModelRoleAssignmentFactory(role=ModelRole.JUDGE)
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelRoleAssignmentFactory(role=ModelRole.JUDGE)


def test_saving_as_default_takes_over_the_role():
    previous = ModelRoleAssignmentFactory(role=ModelRole.JUDGE).configuration
    newcomer = ModelConfigurationFactory.build(name="Newcomer", model_id="judge-2")
    configuration_save(
        configuration=newcomer,
        roles=[ModelRole.TARGET],
        default_roles=[ModelRole.JUDGE],
    )
    assert configuration_for_role(ModelRole.JUDGE) == newcomer
    assert set(newcomer.role_assignments.values_list("role", flat=True)) == {"judge", "target"}
    assert previous.role_assignments.get().is_default is False
    configuration_save(configuration=newcomer, roles=[ModelRole.TARGET])
    assert list(newcomer.role_assignments.values_list("role", flat=True)) == ["target"]


@pytest.mark.parametrize("value", ["sk-abc123", "my key", "1ABC"])
def test_api_key_env_must_be_a_variable_name(value):
    configuration = ModelConfigurationFactory.build(api_key_env=value)
    with pytest.raises(ValidationError) as caught:
        configuration.full_clean()
    assert "api_key_env" in caught.value.message_dict


def test_cost_estimate_uses_prices_per_million_tokens():
    configuration = ModelConfigurationFactory.build()
    assert str(configuration.cost_estimate(prompt_tokens=1_000_000, completion_tokens=0)) == (
        "2.00000000"
    )
    assert (
        OfflineConfigurationFactory.build().cost_estimate(
            prompt_tokens=10**6, completion_tokens=10**6
        )
        == 0
    )


def test_role_helpers_call_the_default_configuration():
    offline = OfflineConfigurationFactory()
    ModelRoleAssignment.objects.create(role=ModelRole.JUDGE, configuration=offline, is_default=True)
    result = chat_for_role(
        role=ModelRole.JUDGE, messages=[{"role": "user", "content": "hi"}], purpose="t"
    )
    assert result.configuration_id == offline.pk
    from pydantic import BaseModel

    class Verdict(BaseModel):
        present: bool

    output = structured_for_role(
        role=ModelRole.JUDGE,
        messages=[{"role": "user", "content": "hi"}],
        schema=Verdict,
        purpose="t",
    )
    assert isinstance(output.output, Verdict)
    with pytest.raises(ApplicationError, match="scenario writer role"):
        chat_for_role(role=ModelRole.SCENARIO_WRITER, messages=[], purpose="t")


def test_demo_seed_is_idempotent_and_keeps_edits():
    from llm.demo import DEMO_CONFIGURATIONS, demo_configurations_seed

    assert "11 created" in demo_configurations_seed()
    for role in ModelRole:
        assert configuration_for_role(role).is_offline
    assert configurations_for_role(ModelRole.TARGET).count() == 3
    judge = ModelConfiguration.objects.get(name="Offline judge")
    judge.description = "Edited by a maintainer"
    judge.save()
    assert "0 created, 11 kept" in demo_configurations_seed()
    judge.refresh_from_db()
    assert judge.description == "Edited by a maintainer"
    assert ModelConfiguration.objects.count() == len(DEMO_CONFIGURATIONS)
    profiles = set(
        ModelConfiguration.objects.filter(name__startswith="Offline target").values_list(
            "extra_params__offline_profile", flat=True
        )
    )
    assert profiles == {"careful", "agreeable", "terse"}
    # The offline panel of judges; the plain offline judge stays the role's default.
    assert configuration_for_role(ModelRole.JUDGE).name == "Offline judge"
    panel = ModelConfiguration.objects.filter(name__startswith="Offline judge: ")
    assert {c.offline_profile for c in panel} == {"lenient", "strict", "noisy"}
