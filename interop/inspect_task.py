"""Run ImpactBench scenarios in Inspect AI, outside the platform (no Django needed).

Export a release's scenarios, then evaluate any model on them:

    python manage.py export_inspect --release 1.0.0 scenarios.jsonl
    inspect eval interop/inspect_task.py -T dataset=scenarios.jsonl \\
        --model openai-api/local/my-model \\
        --model-role user_simulator=openai-api/local/my-simulator \\
        --model-role judge=openai-api/local/my-judge
    # with LOCAL_BASE_URL=http://localhost:8000/v1 and LOCAL_API_KEY=... in the environment

The solver plays the simulated user turn by turn with the platform's own simulator prompt (one
system prompt per turn, from the export), sending each message to the model under test; the
scorer asks the judge the platform's own judge prompt with the transcript, and scores the
sample correct when the behaviour's presence matches the metric's polarity (present for a
positive metric, absent for a negative one) — the platform's pass/fail. The simulator and the
judge default to the model under test when no role is given.
"""

import json
import re
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

_FENCED_JSON = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
TRANSCRIPT_LABEL = "transcript"


def parse_json_reply(text: str) -> dict | None:
    """The JSON object a reply holds (code fences allowed), or None."""
    candidate = text.strip()
    match = _FENCED_JSON.match(candidate)
    if match:
        candidate = match.group(1)
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _role_model(role: str) -> Model:
    return get_model(role=role, default=get_model())


async def _structured(model: Model, messages: list[ChatMessage], required: str) -> dict | None:
    """Ask once, and once more after a reply that is not JSON with the `required` field."""
    for _ in range(2):
        output = await model.generate(messages)
        parsed = parse_json_reply(output.completion)
        if parsed is not None and required in parsed:
            return parsed
        messages = [
            *messages,
            ChatMessageAssistant(content=output.completion),
            ChatMessageUser(
                content=f'That reply is not a JSON object with a "{required}" field. Reply '
                "again with only the corrected JSON object."
            ),
        ]
    return None


@solver
def simulated_user(turns: int | None = None):
    """Multi-turn conversation: the simulated user writes, the model under test answers."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        prompts: list[str] = meta["simulator_prompts"]
        count = min(turns or meta["turns"], len(prompts))
        simulator = _role_model("user_simulator")
        dialogue: list[tuple[str, str]] = []
        state.messages = []  # the situation (input) is for the simulator, never the target
        for index in range(count):
            # The simulator sees the conversation from the user's side: its own messages as
            # "assistant", the target's replies as "user", as on the platform.
            history: list[ChatMessage] = [
                ChatMessageSystem(content=prompts[index]),
                ChatMessageUser(content=meta["conversation_start"]),
            ]
            for user_text, reply in dialogue:
                history += [ChatMessageAssistant(content=user_text), ChatMessageUser(content=reply)]
            turn = await _structured(simulator, history, "message")
            if turn is None or not str(turn.get("message", "")).strip():
                state.metadata["stop_reason"] = "the simulated user's reply was not valid JSON"
                break
            state.messages.append(ChatMessageUser(content=str(turn["message"])))
            state = await generate(state)
            dialogue.append((str(turn["message"]), state.output.completion))
            if turn.get("stop") is True:
                state.metadata["stop_reason"] = str(turn.get("stop_reason", ""))
                break
        state.metadata["dialogue"] = dialogue
        return state

    return solve


def transcript_text(dialogue: list[tuple[str, str]]) -> str:
    """Numbered turns as the platform's judge reads them."""
    lines = []
    for number, (user_text, reply) in enumerate(dialogue, start=1):
        lines.append(f"[Turn {number}] User: {user_text}")
        lines.append(f"[Turn {number}] Assistant: {reply}")
    text = "\n".join(lines)
    # As the platform fences user text: the transcript cannot close its own fence.
    closing = f"</{TRANSCRIPT_LABEL}>"
    opening = f"<{TRANSCRIPT_LABEL}>"
    return text.replace(closing, f"</ {TRANSCRIPT_LABEL}>").replace(
        opening, f"< {TRANSCRIPT_LABEL}>"
    )


def _judge_messages(meta: dict[str, Any], transcript: str) -> list[ChatMessage]:
    placeholder = meta["transcript_placeholder"]
    built: list[ChatMessage] = []
    for message in meta["judge_messages"]:
        content = message["content"].replace(placeholder, transcript)
        built.append(
            ChatMessageSystem(content=content)
            if message["role"] == "system"
            else ChatMessageUser(content=content)
        )
    return built


@scorer(metrics=[accuracy(), stderr()])
def impactbench_judge():
    """Pass when the judged presence is what the polarity asks for (the sample's target)."""

    async def score(state: TaskState, target: Target) -> Score:
        dialogue = state.metadata.get("dialogue") or []
        if not dialogue:
            return Score(value=NOANSWER, explanation="No conversation took place.")
        judge = _role_model("judge")
        messages = _judge_messages(state.metadata, transcript_text(dialogue))
        verdict = await _structured(judge, messages, "present")
        if verdict is None or not isinstance(verdict.get("present"), bool):
            return Score(value=NOANSWER, explanation="The judge's reply was not valid JSON.")
        present = verdict["present"]
        wanted = target.text == "present"
        return Score(
            value=CORRECT if present == wanted else INCORRECT,
            answer="present" if present else "absent",
            explanation=str(verdict.get("justification", "")),
            metadata={
                "present": present,
                "polarity": state.metadata.get("polarity"),
                "evidence": verdict.get("evidence", []),
            },
        )

    return score


@task
def impactbench(dataset: str = "impactbench-inspect.jsonl", turns: int | None = None) -> Task:
    """ImpactBench scenarios from `export_inspect`; `turns` caps the user turns per sample."""
    return Task(
        dataset=json_dataset(dataset),
        solver=simulated_user(turns=turns),
        scorer=impactbench_judge(),
    )
