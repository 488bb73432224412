"""What earlier runs' call log says a new run will cost: tokens per gateway call by purpose,
configuration and turn, how far conversations got, latencies, and the pace runs kept.

Read by `estimates.run_estimate`. A gateway call is one `group_id` of the call log: its
attempts (retries, re-asks) are summed, so re-ask overhead is in the tokens per call. The turn
of a simulator or target call is found by walking a conversation's calls in order: each
simulator call opens the next turn, and the target calls after it (a cut-off reply's second
ask included) belong to that turn.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median

from django.db.models import Count

from llm.models import CallOutcome, LLMCall

from ..models import EvaluationRun, Judgment, RunStatus

SIMULATE = "evaluations.simulate_user"
TARGET = "evaluations.target_reply"
JUDGE = "evaluations.judge_verdict"
# The most recent call-log rows read: enough for several runs, bounded for the run page.
HISTORY_ROWS = 50_000
# Finished runs whose pace (seconds per gateway call) is averaged.
PACE_RUNS = 5


@dataclass
class Tokens:
    """Summed prompt and completion tokens over `n` gateway calls."""

    n: int = 0
    prompt: int = 0
    completion: int = 0

    def add(self, prompt: int, completion: int) -> None:
        self.n += 1
        self.prompt += prompt
        self.completion += completion

    def mean(self) -> tuple[float, float]:
        return self.prompt / self.n, self.completion / self.n


@dataclass
class History:
    # (configuration id, purpose, turn or None for every turn) → tokens
    tokens: dict[tuple[int, str, int | None], Tokens] = field(default_factory=dict)
    # (configuration id, purpose) → conversations seen, and calls made at each turn, in runs
    # of the same length as the one estimated.
    conversations: dict[tuple[int, str], int] = field(default_factory=dict)
    calls_at_turn: dict[tuple[int, str, int], int] = field(default_factory=dict)
    # configuration id → latencies (ms) of answered attempts; attempts per gateway call.
    latencies: dict[int, list[int]] = field(default_factory=dict)
    attempts: dict[int, tuple[int, int]] = field(default_factory=dict)  # (attempts, calls)
    # Seconds per gateway call over the last finished runs, and how many calls that rests on.
    # judge configuration id → (gateway calls, readings stored): a reading asked again after
    # unusable output is a further call.
    judge_calls: dict[int, tuple[int, int]] = field(default_factory=dict)
    pace_seconds: float | None = None
    pace_calls: int = 0
    pace_runs: int = 0

    def tokens_for(self, configuration_id: int, purpose: str, turn: int | None) -> Tokens | None:
        """Tokens at this turn when seen, else over every turn of the purpose."""
        found = self.tokens.get((configuration_id, purpose, turn))
        if found is None and turn is not None:
            found = self.tokens.get((configuration_id, purpose, None))
        return found

    def median_latency_ms(self, configuration_id: int) -> tuple[float | None, int]:
        values = self.latencies.get(configuration_id) or []
        return (median(values) if values else None), len(values)

    def calls_per_conversation(
        self, configuration_id: int, purpose: str, turns: int
    ) -> tuple[float | None, int]:
        """Mean calls of `purpose` a conversation made over `turns` turns (early stops and
        cut-off re-asks included), and the conversations it rests on."""
        seen = self.conversations.get((configuration_id, purpose), 0)
        if not seen:
            return None, 0
        made = sum(
            self.calls_at_turn.get((configuration_id, purpose, k), 0) for k in range(1, turns + 1)
        )
        return made / seen, seen


def _gateway_calls(rows: Iterable[dict]) -> list[dict]:
    """Attempts summed into gateway calls, in the order they were made."""
    calls: dict[str, dict] = {}
    for row in rows:
        call = calls.get(row["group_id"])
        if call is None:
            call = calls[row["group_id"]] = {**row, "attempts": 0, "prompt": 0, "completion": 0}
        call["attempts"] += 1
        call["prompt"] += row["prompt_tokens"]
        call["completion"] += row["completion_tokens"]
        call["id"] = min(call["id"], row["id"])
    return sorted(calls.values(), key=lambda call: call["id"])


def history_read(
    *, configuration_ids: Iterable[int], turns: int, exclude_run_id: int | None = None
) -> History:
    """Learn from the call log of earlier runs that used these configurations (one query for
    the calls, one for the runs they belong to)."""
    ids = set(configuration_ids)
    history = History()
    rows = list(
        LLMCall.objects.filter(configuration_id__in=ids, run_id__isnull=False)
        .exclude(run_id=exclude_run_id)
        .exclude(outcome=CallOutcome.CACHED)
        .order_by("-id")
        .values(
            "id",
            "group_id",
            "run_id",
            "work_item",
            "purpose",
            "configuration_id",
            "outcome",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
        )[:HISTORY_ROWS]
    )
    if not rows:
        return history
    runs = {
        run["pk"]: run
        for run in EvaluationRun.objects.filter(pk__in={row["run_id"] for row in rows}).values(
            "pk", "turns", "status", "started_at", "finished_at"
        )
    }
    for row in rows:
        if row["outcome"] == CallOutcome.SUCCESS:
            history.latencies.setdefault(row["configuration_id"], []).append(row["latency_ms"])
    calls = _gateway_calls(rows)
    _learn_turns(history, calls, runs, turns)
    attempts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    per_run: dict[int, int] = defaultdict(int)
    for call in calls:
        counted = attempts[call["configuration_id"]]
        counted[0] += call["attempts"]
        counted[1] += 1
        per_run[call["run_id"]] += 1
    history.attempts = {key: (a, c) for key, (a, c) in attempts.items()}
    _learn_judge_retries(history, calls)
    _learn_pace(history, runs, per_run)
    return history


def _learn_turns(history: History, calls: list[dict], runs: dict[int, dict], turns: int) -> None:
    by_item: dict[tuple[int, str], list[dict]] = defaultdict(list)
    for call in calls:
        by_item[(call["run_id"], call["work_item"])].append(call)
    for (run_id, _item), item_calls in by_item.items():
        same_length = runs.get(run_id, {}).get("turns") == turns
        turn = 0
        started: set[tuple[int, str]] = set()
        for call in item_calls:
            purpose, configuration_id = call["purpose"], call["configuration_id"]
            if purpose == SIMULATE:
                turn += 1
            at = turn if purpose in (SIMULATE, TARGET) else None
            key = (configuration_id, purpose, at)
            history.tokens.setdefault(key, Tokens()).add(call["prompt"], call["completion"])
            if at is not None:
                pooled = (configuration_id, purpose, None)
                history.tokens.setdefault(pooled, Tokens()).add(call["prompt"], call["completion"])
                if same_length:
                    started.add((configuration_id, purpose))
                    step = (configuration_id, purpose, at)
                    history.calls_at_turn[step] = history.calls_at_turn.get(step, 0) + 1
        for key in started:
            history.conversations[key] = history.conversations.get(key, 0) + 1


def _learn_judge_retries(history: History, calls: list[dict]) -> None:
    asked: dict[int, int] = defaultdict(int)
    for call in calls:
        if call["purpose"] == JUDGE:
            asked[call["configuration_id"]] += 1
    if not asked:
        return
    run_ids = {call["run_id"] for call in calls if call["purpose"] == JUDGE}
    stored = dict(
        Judgment.objects.filter(conversation__run_id__in=run_ids, judge_id__in=asked)
        .values_list("judge_id")
        .annotate(n=Count("pk"))
    )
    history.judge_calls = {
        judge_id: (asked[judge_id], stored[judge_id]) for judge_id in asked if stored.get(judge_id)
    }


def _learn_pace(history: History, runs: dict[int, dict], per_run: dict[int, int]) -> None:
    """Seconds per gateway call of the latest finished runs: what limits and latencies leave
    out (database writes, scheduling) is in it."""
    finished = sorted(
        (
            run
            for run in runs.values()
            if run["status"] == RunStatus.COMPLETED and run["started_at"] and run["finished_at"]
        ),
        key=lambda run: run["finished_at"],
        reverse=True,
    )[:PACE_RUNS]
    seconds = sum((run["finished_at"] - run["started_at"]).total_seconds() for run in finished)
    calls = sum(per_run[run["pk"]] for run in finished)
    if calls:
        history.pace_seconds = seconds / calls
        history.pace_calls = calls
        history.pace_runs = len(finished)
