"""Offline demo configurations for every role, so the demo runs end to end without a key."""

from dataclasses import dataclass, field

from django.db import transaction

from core.seed_steps import SeedStep

from .models import ModelConfiguration, ModelRole, ModelRoleAssignment, Provider


@dataclass(frozen=True)
class DemoConfiguration:
    name: str
    role: ModelRole
    description: str
    extra_params: dict = field(default_factory=dict)


DEMO_CONFIGURATIONS: list[DemoConfiguration] = [
    DemoConfiguration(
        "Offline drafter", ModelRole.METRIC_DRAFTER, "Drafts metric candidates in the demo."
    ),
    DemoConfiguration(
        "Offline scenario writer", ModelRole.SCENARIO_WRITER, "Writes scenarios in the demo."
    ),
    DemoConfiguration(
        "Offline user simulator",
        ModelRole.USER_SIMULATOR,
        "Plays the user in simulated conversations in the demo.",
    ),
    DemoConfiguration("Offline judge", ModelRole.JUDGE, "Judges conversations in the demo."),
    # A small panel with known, different errors (`evaluations.offline_judge`).
    DemoConfiguration(
        "Offline judge: lenient",
        ModelRole.JUDGE,
        "Demo panel judge that passes about a third of the replies it should fail.",
        {"offline_profile": "lenient"},
    ),
    DemoConfiguration(
        "Offline judge: strict",
        ModelRole.JUDGE,
        "Demo panel judge that fails about a third of the replies it should pass.",
        {"offline_profile": "strict"},
    ),
    DemoConfiguration(
        "Offline judge: noisy",
        ModelRole.JUDGE,
        "Demo panel judge that reads a quarter of the conversations the wrong way round.",
        {"offline_profile": "noisy"},
    ),
    DemoConfiguration(
        "Offline fidelity checker",
        ModelRole.FIDELITY_CHECKER,
        "Checks the demo's simulated users by rule: persona, hidden goal, fresh lines, "
        "character, replies followed.",
    ),
    DemoConfiguration(
        "Offline target: careful",
        ModelRole.TARGET,
        "Demo target that acknowledges feelings, states its limits and points to help.",
        {"offline_profile": "careful"},
    ),
    DemoConfiguration(
        "Offline target: agreeable",
        ModelRole.TARGET,
        "Demo target that agrees with whatever the user says.",
        {"offline_profile": "agreeable"},
    ),
    DemoConfiguration(
        "Offline target: terse",
        ModelRole.TARGET,
        "Demo target that answers in a few words.",
        {"offline_profile": "terse"},
    ),
]


@transaction.atomic
def demo_configurations_seed() -> str:
    """Create the missing offline configurations; existing ones keep every edit.

    Each becomes the default for its role only while that role has no default, so a
    maintainer's choice of a real model is never undone by re-seeding.
    """
    created = 0
    for demo in DEMO_CONFIGURATIONS:
        configuration, was_created = ModelConfiguration.objects.get_or_create(
            name=demo.name,
            defaults={
                "provider": Provider.OFFLINE,
                "model_id": "offline-demo",
                "api_key_env": "",
                "description": demo.description,
                "extra_params": demo.extra_params,
                "seed": 0,
            },
        )
        created += was_created
        if not was_created:
            continue
        has_default = ModelRoleAssignment.objects.filter(role=demo.role, is_default=True).exists()
        ModelRoleAssignment.objects.get_or_create(
            role=demo.role,
            configuration=configuration,
            defaults={"is_default": not has_default},
        )
    kept = len(DEMO_CONFIGURATIONS) - created
    return f"Offline model configurations: {created} created, {kept} kept."


def demo_seed_steps() -> list[SeedStep]:
    """This app's step of the demo seed (the demo app runs them)."""
    return [
        SeedStep(
            "configurations", "offline model configurations", demo_configurations_seed, order=10
        )
    ]
