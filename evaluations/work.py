"""Kinds of run work besides conversations, registered by the apps that own their rows.

A run simulates conversations (built in) and may hold other items processed beside them, such
as the rubrics app's replies to rubric items. Those apps sit above evaluations, so the run
machinery cannot import them: each registers a `RunWorkKind` in its `AppConfig.ready`, and
creating, planning, launching, dispatching, processing inline, closing, reaping, retrying,
progress, the run page and the exports ask every registered kind.

A kind's rows have the shape `services.claims` works on (``run``, ``status``, ``claimed_by``,
``lease_expires_at``, ``dispatched_at``), so the generic steps below use its model directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import Count, Model, Q, QuerySet

from .models import ConversationStatus

if TYPE_CHECKING:
    from django import forms

    from llm.models import ModelConfiguration

    from .models import EvaluationRun

UNFINISHED = (ConversationStatus.PENDING, ConversationStatus.RUNNING)


@dataclass(frozen=True)
class WorkPlan:
    """What launching would add for one kind: rows, model calls, tokens and their price."""

    label: str  # what `units` counts, e.g. "rubric replies"
    items: int = 0  # chosen for the run
    units: int = 0  # rows launching creates (items × targets)
    target_calls: int = 0
    judge_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)


@dataclass(frozen=True)
class WorkCounts:
    total: int = 0
    completed: int = 0
    failed: int = 0


@dataclass(frozen=True)
class InspectDataset:
    """A separate Inspect AI dataset beside a release's scenarios: downloaded with
    `?kind=<kind>`, written by `export_inspect <option>`."""

    kind: str
    name: str  # in the file name
    lines: Callable[[], Iterator[str]]
    option: str
    help: str


class RunWorkKind:
    """One kind of work item; subclasses fill in what is specific to their rows."""

    key: str = ""
    model: type[Model]
    # The keyword `run_create` takes the chosen items by (also the run form's field name), the
    # plural shown in "Choose a release, some metric versions or some …", and the singular.
    create_argument: str = ""
    items_label: str = ""
    item_label: str = ""
    # `run_evaluation`'s option naming items by key, and its help.
    keys_option: str = ""
    keys_help: str = ""
    # Names of the tasks `send` queues (their first argument is a row id or a list of them):
    # the reaper looks for them in the broker to tell a lost message from one still waiting.
    task_names: tuple[str, ...] = ()

    # --- What the owner supplies ---------------------------------------------------------------

    def attach(self, run: EvaluationRun, items: Sequence) -> None:
        """Record the items chosen for a draft run."""
        raise NotImplementedError

    def items_from_keys(self, keys: Sequence[str]) -> list:
        """The items named by key (command line); unknown keys raise ApplicationError."""
        raise NotImplementedError

    def create(self, run: EvaluationRun, targets: list[ModelConfiguration]) -> None:
        """At launch: the missing rows of the run (a no-op for rows that exist)."""
        raise NotImplementedError

    def plan(self, run: EvaluationRun, targets: list[ModelConfiguration]) -> WorkPlan:
        raise NotImplementedError

    def send(self, ids: list[int]) -> None:
        """Hand the rows to workers (one task each, or in batches)."""
        raise NotImplementedError

    def process(self, item_id: int) -> bool:
        """Process one row here, without a worker; False when another holds its claim."""
        raise NotImplementedError

    def export_records(self, run: EvaluationRun) -> Iterator[dict]:
        """The rows as records of the run's JSONL export."""
        return iter(())

    def page_context(self, run: EvaluationRun) -> dict:
        """What the run page shows of this kind (failed rows, scores)."""
        return {}

    def form_fields(self) -> dict[str, forms.Field]:
        """Fields of the run form choosing the items, keyed by `create_argument`."""
        return {}

    def inspect_dataset(self) -> InspectDataset | None:
        return None

    # --- Generic over the model's claim columns -----------------------------------------------

    def rows(self, run_id: int) -> QuerySet:
        return self.model.objects.filter(run_id=run_id)

    def unfinished_ids(self, run_id: int) -> list[int]:
        rows = self.rows(run_id).filter(status__in=UNFINISHED).order_by("pk")
        return list(rows.values_list("pk", flat=True))

    def unfinished_exists(self, run_id: int) -> bool:
        return self.rows(run_id).filter(status__in=UNFINISHED).exists()

    def completed_exists(self, run_id: int) -> bool:
        return self.rows(run_id).filter(status=ConversationStatus.COMPLETED).exists()

    def retry_failed(self, run_id: int) -> int:
        """Failed rows back to pending; returns how many."""
        failed = self.rows(run_id).filter(status=ConversationStatus.FAILED)
        return failed.update(status=ConversationStatus.PENDING)

    def counts(self, run_id: int) -> WorkCounts:
        counts = self.rows(run_id).aggregate(
            total=Count("pk"),
            completed=Count("pk", filter=Q(status=ConversationStatus.COMPLETED)),
            failed=Count("pk", filter=Q(status=ConversationStatus.FAILED)),
        )
        return WorkCounts(
            total=counts["total"] or 0,
            completed=counts["completed"] or 0,
            failed=counts["failed"] or 0,
        )


_kinds: dict[str, RunWorkKind] = {}


def register(kind: RunWorkKind) -> None:
    """Add a kind (from the owner's `AppConfig.ready`); registering a key again replaces it."""
    _kinds[kind.key] = kind


def unregister(key: str) -> None:
    _kinds.pop(key, None)


def kinds() -> list[RunWorkKind]:
    return list(_kinds.values())


def kind_for(key: str) -> RunWorkKind | None:
    return _kinds.get(key)


def inspect_datasets() -> list[InspectDataset]:
    return [dataset for kind in kinds() if (dataset := kind.inspect_dataset()) is not None]
