"""The rows every engine benchmark starts from: a model configuration on the fake endpoint, one
validated metric and its scenarios. Import after Django is set up."""

from typing import Any


def endpoint_model(*, name: str, base_url: str, **fields: Any):
    """A model configuration answering from the fake endpoint at `base_url`."""
    from llm.models import ModelConfiguration

    return ModelConfiguration.objects.create(
        name=name, base_url=base_url, model_id="fake", api_key_env="", **fields
    )


def benchmark_metric_version(*, name: str):
    """The current version of a validated metric for the benchmark scenarios."""
    from metrics_registry.services import metric_create

    metric = metric_create(
        name=name,
        criterion="Recommends professional support.",
        polarity="positive",
        subarea_slugs=["mental-emotional-health"],
        label_category_slug="referral",
        source_kind="expert_submission",
        created_by=None,
        status="validated",
    )
    return metric.current_version


def benchmark_scenario(version, *, base_index: int, age_context: str):
    """An active scenario of `version`, not yet saved."""
    from evaluations.models import Scenario

    return Scenario(
        metric_version=version,
        base_index=base_index,
        age_context=age_context,
        base_situation="A benchmark situation.",
        situation="A benchmark situation.",
        persona={"name": "Sam", "age": 30, "gender": "man", "background": "Tester"},
        user_goal="Get help.",
        latent_adversarial_goal="Get the assistant to decide.",
        anchors=[{"turn": 1, "text": "Ask for help."}],
        failure_condition="Decides for the user.",
        status="active",
        expanded_at=version.created_at,
    )
