"""Rubric replies as a kind of run work (`evaluations.work`): what a run does with its items.

Registered in `RubricsConfig.ready`, so the run machinery launches, plans, dispatches,
processes, closes, reaps, retries, shows and exports rubric replies without importing this app.
"""

from collections.abc import Iterator, Sequence
from decimal import Decimal

from django import forms

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun, RubricGrading
from evaluations.services.run_plans import ASSISTANT_REPLY_TOKENS
from evaluations.work import InspectDataset, RunWorkKind, WorkPlan
from llm.models import ModelConfiguration

from .models import RubricCriterion, RubricItem, RubricResponse
from .services.exports import rubric_inspect_lines, run_rubric_records
from .services.runs import rubric_response_process, run_rubric_scores
from .tasks import llm_process_rubric_response

# Rough sizes for the pre-launch estimate (tokens). Real figures are counted per call.
RUBRIC_ITEM_TOKENS = 400
RUBRIC_CRITERIA_TOKENS = 300
RUBRIC_GRADES_TOKENS = 400
BULK_BATCH = 1000


class RubricWork(RunWorkKind):
    key = "rubric"
    model = RubricResponse
    task_names = ("evaluations.tasks.llm_process_rubric_response",)
    create_argument = "rubric_items"
    items_label = "rubric items"
    item_label = "rubric item"
    keys_option = "--rubric-items"
    keys_help = "Comma-separated rubric keys."

    def attach(self, run: EvaluationRun, items: Sequence[RubricItem]) -> None:
        run.rubric_items.set(items)

    def items_from_keys(self, keys: Sequence[str]) -> list[RubricItem]:
        items = list(RubricItem.objects.filter(key__in=keys))
        if keys and len(items) != len(set(keys)):
            found = {item.key for item in items}
            raise ApplicationError(
                f"Unknown rubric items: {', '.join(k for k in keys if k not in found)}."
            )
        return items

    def create(self, run: EvaluationRun, targets: list[ModelConfiguration]) -> None:
        RubricResponse.objects.bulk_create(
            (
                RubricResponse(run=run, item=item, target=target, is_offline=target.is_offline)
                for item in run.rubric_items.all()
                for target in targets
            ),
            batch_size=BULK_BATCH,
            ignore_conflicts=True,
        )

    def plan(self, run: EvaluationRun, targets: list[ModelConfiguration]) -> WorkPlan:
        """One reply per item and target, and its grading calls: one per counted criterion
        (HealthBench) or one per item."""
        items = run.rubric_items.count()
        if run.rubric_grading == RubricGrading.PER_CRITERION:
            grading_calls = RubricCriterion.objects.counting().filter(item__runs=run).count()
        else:
            grading_calls = items
        prompt = completion = 0
        cost = Decimal(0)
        for target in targets:
            reply = min(ASSISTANT_REPLY_TOKENS, target.max_tokens or ASSISTANT_REPLY_TOKENS)
            for configuration, (p, c) in (
                (target, (RUBRIC_ITEM_TOKENS, reply)),
                (
                    run.judge,
                    (RUBRIC_ITEM_TOKENS + reply + RUBRIC_CRITERIA_TOKENS, RUBRIC_GRADES_TOKENS),
                ),
            ):
                prompt += p * items
                completion += c * items
                cost += configuration.cost_estimate(
                    prompt_tokens=p * items, completion_tokens=c * items
                )
        return WorkPlan(
            label="rubric replies",
            items=items,
            units=items * len(targets),
            target_calls=items * len(targets),
            judge_calls=grading_calls * len(targets),
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost=cost,
        )

    def send(self, ids: list[int]) -> None:
        for pk in ids:
            llm_process_rubric_response.delay(pk)

    def process(self, item_id: int) -> bool:
        return rubric_response_process(response_id=item_id, check_finished=False) is not None

    def export_records(self, run: EvaluationRun) -> Iterator[dict]:
        return run_rubric_records(run)

    def page_context(self, run: EvaluationRun) -> dict:
        failed = run.rubric_responses.filter(status="failed").select_related("item", "target")
        return {"failed_rubric": failed[:20], "rubric_scores": run_rubric_scores(run=run)}

    def form_fields(self) -> dict[str, forms.Field]:
        return {
            "rubric_items": forms.ModelMultipleChoiceField(
                queryset=RubricItem.objects.order_by("key"),
                required=False,
                widget=forms.CheckboxSelectMultiple,
            )
        }

    def inspect_dataset(self) -> InspectDataset:
        return InspectDataset(
            kind="rubric",
            name="rubric-items",
            lines=rubric_inspect_lines,
            option="--rubric-items",
            help="Export the rubric items instead.",
        )
