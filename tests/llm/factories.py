import uuid
from decimal import Decimal

import factory

from llm.models import (
    CallOutcome,
    LLMCall,
    ModelConfiguration,
    ModelRole,
    ModelRoleAssignment,
    Provider,
)


class ModelConfigurationFactory(factory.django.DjangoModelFactory):
    """An endpoint configuration; pass base_url=fake_openai.base_url in gateway tests."""

    class Meta:
        model = ModelConfiguration

    name = factory.Sequence(lambda n: f"Model {n}")
    provider = Provider.OPENAI_COMPATIBLE
    model_id = "test-model"
    temperature = 0.0
    max_tokens = 256
    api_key_env = ""
    price_per_million_input_tokens = Decimal("2.0000")
    price_per_million_output_tokens = Decimal("8.0000")


class OfflineConfigurationFactory(ModelConfigurationFactory):
    provider = Provider.OFFLINE
    model_id = "offline-demo"


class ModelRoleAssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ModelRoleAssignment

    role = ModelRole.JUDGE
    configuration = factory.SubFactory(ModelConfigurationFactory)
    is_default = True


class LLMCallFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LLMCall

    configuration = factory.SubFactory(ModelConfigurationFactory)
    role = ModelRole.JUDGE
    purpose = "tests.call"
    group_id = factory.LazyFunction(uuid.uuid4)
    fingerprint = factory.Sequence(lambda n: f"{n:064x}")
    messages = factory.LazyFunction(lambda: [{"role": "user", "content": "Hello"}])
    outcome = CallOutcome.SUCCESS
    response_text = "Hello back"
    prompt_tokens = 10
    completion_tokens = 5
