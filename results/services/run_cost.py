"""What an official run cost, as its public page and the API show it: the total, the cost per
conversation, each model in each role, and each target with the simulator's and the judge's
calls made for its conversations (the overhead of testing it).

Computed from the call log (`llm.selectors.run_call_costs`, one GROUP BY) when the run's
figures are refreshed and stored with its analysis (`RunAnalysis.cost`), so a page reads it
with the run and makes no query of its own.

A configuration without prices records its calls at $0, which is not what they cost: such
calls make a figure "unknown" when nothing else was priced, else a lower bound ("at least").
An attempt whose outcome is unknown (its worker was stopped after sending it and before
reading the reply, restored from the journal with no tokens) may have been billed: it makes the
figure a lower bound too — unless the provider's own records settled it (`llm.reconcile`:
reconciled with what it billed, or not billed): such rows count in `reconciled_calls`, and a
figure whose unknown rows are all settled is exact. A row whose provider could not be asked for
hours is given up ("lookup failed"): it stays among the unknown ones (the figure a lower bound)
and is also counted in `lookup_failed_calls`, so a page can say how many could not be
reconciled.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _

from evaluations.models import Conversation, EvaluationRun
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import CallCost, run_call_costs

KNOWN = "known"
LOWER_BOUND = "lower_bound"
UNKNOWN = "unknown"
# Every status, in one place (the API schema names its enum from it).
COST_STATUSES = (KNOWN, LOWER_BOUND, UNKNOWN)

_CENTS = Decimal("1e-8")
_CONVERSATION = "conversation:"


@dataclass
class _Sum:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    unpriced_calls: int = 0
    unknown_outcome_calls: int = 0
    reconciled_calls: int = 0
    lookup_failed_calls: int = 0

    def add(self, row: CallCost) -> None:
        self.calls += row.calls
        self.prompt_tokens += row.prompt_tokens
        self.completion_tokens += row.completion_tokens
        self.cost += row.cost
        self.unpriced_calls += row.unpriced_calls
        self.unknown_outcome_calls += row.unknown_outcome_calls
        self.reconciled_calls += row.reconciled_calls
        self.lookup_failed_calls += row.lookup_failed_calls

    def merged(self, other: _Sum) -> _Sum:
        total = _Sum(**vars(self))
        total.calls += other.calls
        total.prompt_tokens += other.prompt_tokens
        total.completion_tokens += other.completion_tokens
        total.cost += other.cost
        total.unpriced_calls += other.unpriced_calls
        total.unknown_outcome_calls += other.unknown_outcome_calls
        total.reconciled_calls += other.reconciled_calls
        total.lookup_failed_calls += other.lookup_failed_calls
        return total

    @property
    def status(self) -> str:
        if not self.unpriced_calls and not self.unknown_outcome_calls:
            return KNOWN
        # Unknown outcomes alone leave a priced total that is at least right.
        return LOWER_BOUND if self.cost > 0 or not self.unpriced_calls else UNKNOWN

    def figure(self, conversations: int | None = None) -> dict[str, Any]:
        """As stored: amounts as strings of dollars, None where the price is unknown."""
        known = self.status != UNKNOWN
        figure: dict[str, Any] = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": _dollars(self.cost) if known else None,
            "status": self.status,
            "unpriced_calls": self.unpriced_calls,
            "unknown_outcome_calls": self.unknown_outcome_calls,
            "reconciled_calls": self.reconciled_calls,
            "lookup_failed_calls": self.lookup_failed_calls,
        }
        if conversations is not None:
            figure["conversations"] = conversations
            figure["per_conversation"] = (
                _dollars(self.cost / conversations) if known and conversations else None
            )
        return figure


def _dollars(amount: Decimal) -> str:
    return format(amount.quantize(_CENTS), "f")


def _conversation_id(work_item: str) -> int | None:
    if not work_item.startswith(_CONVERSATION):
        return None
    tail = work_item[len(_CONVERSATION) :]
    return int(tail) if tail.isdigit() else None


def run_cost_compute(run: EvaluationRun) -> dict[str, Any]:
    """The run's cost figures from its call log (three queries, whatever the run's size)."""
    rows = run_call_costs(run_id=run.pk)
    conversations = dict(Conversation.objects.filter(run=run).values_list("pk", "target_id"))
    names = dict(
        ModelConfiguration.objects.filter(
            pk__in={row.configuration_id for row in rows} | set(conversations.values())
        ).values_list("pk", "name")
    )
    total = _Sum()
    per_model: dict[tuple[int, str], _Sum] = defaultdict(_Sum)
    own: dict[int, _Sum] = defaultdict(_Sum)  # a target's own calls
    overhead: dict[int, _Sum] = defaultdict(_Sum)  # simulator and judge calls for its conversations
    run_wide = _Sum()  # calls for the run as a whole (fidelity checks, anchors)
    for row in rows:
        total.add(row)
        per_model[(row.configuration_id, row.role)].add(row)
        target_id = conversations.get(_conversation_id(row.work_item) or 0)
        if target_id is None:
            run_wide.add(row)
        elif row.role == ModelRole.TARGET:
            own[target_id].add(row)
        else:
            overhead[target_id].add(row)
    counts: dict[int, int] = defaultdict(int)
    for target_id in conversations.values():
        counts[target_id] += 1
    return {
        "total": total.figure(conversations=len(conversations)),
        "models": [
            {"configuration": pk, "name": names.get(pk, ""), "role": role, **spent.figure()}
            for (pk, role), spent in sorted(per_model.items(), key=_model_order(names))
        ],
        "targets": [
            {
                "target": target_id,
                "name": names.get(target_id, ""),
                "own": own[target_id].figure(),
                "overhead": overhead[target_id].figure(),
                **own[target_id].merged(overhead[target_id]).figure(conversations=n),
            }
            for target_id, n in sorted(counts.items(), key=lambda item: names.get(item[0], ""))
        ],
        "run_wide": run_wide.figure(),
    }


_ROLE_ORDER = {ModelRole.TARGET: 0, ModelRole.USER_SIMULATOR: 1, ModelRole.JUDGE: 2}


def _model_order(names: dict[int, str]):
    def key(item: tuple[tuple[int, str], _Sum]) -> tuple[int, str, int]:
        (pk, role), _ = item
        return (_ROLE_ORDER.get(role, len(_ROLE_ORDER)), names.get(pk, ""), pk)

    return key


@dataclass(frozen=True)
class CostFigure:
    """One stored figure as a page shows it."""

    cost: Decimal | None
    status: str
    calls: int = 0
    unpriced_calls: int = 0
    unknown_outcome_calls: int = 0
    reconciled_calls: int = 0
    lookup_failed_calls: int = 0
    conversations: int | None = None
    per_conversation: Decimal | None = None

    @property
    def unknown(self) -> bool:
        return self.status == UNKNOWN

    @property
    def lower_bound(self) -> bool:
        return self.status == LOWER_BOUND


def _figure(stored: dict[str, Any]) -> CostFigure:
    def amount(name: str) -> Decimal | None:
        value = stored.get(name)
        return None if value is None else Decimal(value)

    return CostFigure(
        cost=amount("cost"),
        status=stored.get("status", UNKNOWN),
        calls=stored.get("calls", 0),
        unpriced_calls=stored.get("unpriced_calls", 0),
        unknown_outcome_calls=stored.get("unknown_outcome_calls", 0),
        reconciled_calls=stored.get("reconciled_calls", 0),
        lookup_failed_calls=stored.get("lookup_failed_calls", 0),
        conversations=stored.get("conversations"),
        per_conversation=amount("per_conversation"),
    )


@dataclass(frozen=True)
class RunCostView:
    total: CostFigure
    targets: list[dict[str, Any]]
    models: list[dict[str, Any]]
    run_wide: CostFigure


def run_cost_view(stored: dict[str, Any] | None) -> RunCostView | None:
    """The stored figures for a page (no query), or None before the run's first refresh with
    them, and for a run that made no model call (a synthetic dataset's)."""
    if not stored or not stored.get("total", {}).get("calls"):
        return None
    return RunCostView(
        total=_figure(stored["total"]),
        targets=[
            {
                "name": t["name"],
                "own": _figure(t["own"]),
                "overhead": _figure(t["overhead"]),
                "all": _figure(t),
            }
            for t in stored.get("targets", [])
        ],
        models=[
            {"name": m["name"], "role": _role_label(m["role"]), "figure": _figure(m)}
            for m in stored.get("models", [])
        ],
        run_wide=_figure(stored.get("run_wide", {"status": KNOWN, "cost": "0"})),
    )


_ROLE_LABELS = {
    ModelRole.TARGET: _("Target model"),
    ModelRole.USER_SIMULATOR: _("User simulator"),
    ModelRole.JUDGE: _("Judge"),
    ModelRole.FIDELITY_CHECKER: _("Simulator fidelity checker"),
}


def _role_label(role: str) -> str:
    return str(_ROLE_LABELS.get(role, role))
