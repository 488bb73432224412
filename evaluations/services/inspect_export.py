"""A release's scenarios as an Inspect AI dataset, one sample per line.

Each line loads with `inspect_ai.dataset.json_dataset(path)` and its default field names:

    {"id": "IB-M-0001-v1-b1-teen", "input": "<the situation>", "target": "present",
     "metadata": {"metric_key": …, "criterion": …, "polarity": …, "persona": …, …,
                  "simulator_prompts": [one system prompt per user turn],
                  "judge_messages": [system, user with TRANSCRIPT_PLACEHOLDER]}}

`target` is what the judge must find for the reply to pass: "present" for a positive metric,
"absent" for a negative one. The prompts are the platform's own, rendered here, so
`interop/inspect_task.py` (which needs no Django) replays a scenario exactly as a run would:
the simulated user's brief per turn, the judge's rubric, and the JSON each must return.
"""

import json
from collections.abc import Iterator

from llm.schema_prompt import schema_instructions
from metrics_registry.models import Polarity, Release

from .. import prompts
from ..crisis_selectors import scenario_crisis_lines
from ..models import DEFAULT_TURNS, Scenario, ScenarioStatus
from ..schemas import JudgeVerdict, SimulatedUserTurn
from ..visibility import HeldScenarios, scenarios_public
from .scenarios import anchors_fit

TRANSCRIPT_PLACEHOLDER = "{{transcript}}"
INSPECT_CONTENT_TYPE = "application/jsonl; charset=utf-8"


def release_scenarios(release: Release, *, held: HeldScenarios):
    """The release's active, expanded scenarios, less those `held` back for blind review
    (`evaluations.visibility`), as every public download must leave them out."""
    scenarios = scenarios_public(held=held)
    return (
        scenarios.filter(
            metric_version__release_items__release=release, status=ScenarioStatus.ACTIVE
        )
        .exclude(user_goal="")
        .select_related("metric_version__metric")
        .order_by("metric_version__metric__key", "base_index", "-age_context")
    )


def inspect_scenario_sample(scenario: Scenario, *, turns: int = DEFAULT_TURNS) -> dict:
    version = scenario.metric_version
    anchors = anchors_fit(scenario.anchors or [], turns=turns)
    simulator_prompts = [
        prompts.simulator_system_prompt(
            scenario=scenario,
            anchors=anchors,
            turn=turn,
            turns=turns,
            due=[i for i, anchor in enumerate(anchors) if anchor["turn"] == turn],
        )
        + "\n\n"
        + schema_instructions(SimulatedUserTurn)
        for turn in range(1, turns + 1)
    ]
    judge = prompts.judge_messages(
        version=version,
        scenario=scenario,
        turns=[],
        transcript=TRANSCRIPT_PLACEHOLDER,
        crisis_lines=scenario_crisis_lines(scenario),
    )
    judge[0]["content"] += "\n\n" + schema_instructions(JudgeVerdict)
    return {
        "id": f"{version.metric.key}-v{version.number}-b{scenario.base_index}-"
        f"{scenario.age_context}",
        "input": scenario.situation,
        "target": "present" if version.polarity == Polarity.POSITIVE else "absent",
        "metadata": {
            "metric_key": version.metric.key,
            "metric_version": version.number,
            "metric_name": version.name,
            "criterion": version.criterion,
            "polarity": version.polarity,
            "age_context": scenario.age_context,
            "base_index": scenario.base_index,
            "persona": scenario.persona,
            "user_goal": scenario.user_goal,
            "latent_goal": scenario.latent_adversarial_goal,
            "anchors": anchors,
            "failure_condition": scenario.failure_condition,
            "turns": turns,
            "conversation_start": prompts.CONVERSATION_START,
            "simulator_prompts": simulator_prompts,
            "judge_messages": judge,
            "transcript_placeholder": TRANSCRIPT_PLACEHOLDER,
        },
    }


def release_inspect_lines(
    release: Release, *, held: HeldScenarios, turns: int = DEFAULT_TURNS
) -> Iterator[str]:
    """JSONL: one sample per active, expanded scenario of the release's metrics, less those
    `held` back for blind review (None for curators)."""
    scenarios = release_scenarios(release, held=held)
    for scenario in scenarios.iterator(chunk_size=200):
        yield json.dumps(inspect_scenario_sample(scenario, turns=turns), ensure_ascii=False) + "\n"
