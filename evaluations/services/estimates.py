"""What a run will make before it is launched: calls, tokens, cost and wall time per role and per
configuration, learned from earlier runs' call log (`estimate_history`) and else from a stated
prior.

Calls are counted from the run's design and what is already stored: a conversation that is
simulated (a judge-only swap study copies them) is not simulated again, a stored anchor check
or fidelity reading is not asked again, stored judgments are not repeated, and a completed
conversation costs nothing. Early stops and cut-off re-asks come from history (runs of the same
length); without it every conversation is assumed to run its full length. Retries and re-asks
after an error are not counted as calls (their tokens are in the learned tokens per call).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.utils.translation import gettext as _

from llm.batches import batch_supported
from llm.models import ModelConfiguration

from ..models import EvaluationRun
from . import run_plans as plans
from .anchors import RECHECK_MIN_REPLICATES
from .estimate_history import JUDGE, SIMULATE, TARGET, History, history_read
from .estimate_time import configuration_wall_seconds, duration, run_wall_seconds
from .estimate_work import RUBRIC_GRADES, RUBRIC_REPLY, Work, prior_tokens, work_count
from .panel import run_panel

ANCHOR = "evaluations.anchor_check"
RECHECK = "evaluations.anchor_recheck"
FIDELITY = "evaluations.fidelity_check"
ROLE_LABELS = {
    SIMULATE: "simulator",
    TARGET: "target",
    ANCHOR: "anchor check",
    RECHECK: "anchor recheck",
    FIDELITY: "fidelity check",
    JUDGE: "judge",
    RUBRIC_REPLY: "rubric reply",
    RUBRIC_GRADES: "rubric grading",
}
# Prior latencies (ms) of one call without history: the offline model answers in-process.
PRIOR_LATENCY_MS = {True: 20.0, False: 3000.0}


@dataclass
class RoleLine:
    """One role's calls on one configuration; `token_n` 0 means the prior was used."""

    purpose: str
    configuration: ModelConfiguration
    calls: float  # expected
    max_calls: int  # every conversation at its full length
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    token_n: int = 0
    calls_n: int = 0  # conversations the expected count (early stops) rests on
    batched: bool = False  # sent through the provider's batch API, at its batch price

    @property
    def role(self) -> str:
        return ROLE_LABELS.get(self.purpose, self.purpose)


@dataclass
class ConfigurationEstimate:
    configuration: ModelConfiguration
    roles: list[str]
    calls: float
    max_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None  # None: the configuration has no price
    token_n: int  # gateway calls the tokens rest on (0: prior)
    latency_ms: float
    latency_n: int  # answered attempts the latency rests on (0: prior)
    wall_seconds: float  # this configuration's calls alone, at its limits
    limited_by: str = ""  # the limit that sets `wall_seconds` (requests, or tokens, per minute)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def wall_time(self) -> str:
        return duration(self.wall_seconds)

    @property
    def token_basis(self) -> str:
        if not self.token_n:
            return _("prior (prompt lengths)")
        return _("history, %(n)s calls") % {"n": self.token_n}

    @property
    def latency_basis(self) -> str:
        if not self.latency_n:
            basis = _("prior latency %(ms)s ms") % {"ms": round(self.latency_ms)}
        else:
            basis = _("median latency %(ms)s ms of %(n)s calls") % {
                "ms": round(self.latency_ms),
                "n": self.latency_n,
            }
        if self.limited_by:
            basis += "; " + _("limited by %(limit)s") % {"limit": self.limited_by}
        return basis


@dataclass
class RunEstimate:
    lines: list[RoleLine]
    configurations: list[ConfigurationEstimate]
    conversations: int  # that still need any call
    simulated: int  # of those, already simulated (only judged or checked)
    wall_seconds: float
    wall_basis: str
    notes: list[str] = field(default_factory=list)

    @property
    def wall_time(self) -> str:
        return duration(self.wall_seconds)

    @property
    def calls(self) -> int:
        return round(sum(c.calls for c in self.configurations))

    @property
    def max_calls(self) -> int:
        return sum(c.max_calls for c in self.configurations)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.configurations)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.configurations)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> Decimal | None:
        """The known prices' total; None when no configuration has a price."""
        known = [c.cost for c in self.configurations if c.cost is not None]
        return sum(known, Decimal(0)) if known else None

    @property
    def price_unknown(self) -> list[str]:
        return [c.configuration.name for c in self.configurations if c.cost is None]


def price_known(configuration: ModelConfiguration) -> bool:
    """Offline models are free; an endpoint with neither price set has an unknown price."""
    return configuration.is_offline or bool(
        configuration.price_per_million_input_tokens
        or configuration.price_per_million_output_tokens
    )


def _line(
    history: History,
    *,
    run: EvaluationRun,
    purpose: str,
    configuration: ModelConfiguration,
    count: int,
    target: ModelConfiguration | None = None,
) -> RoleLine:
    """`count` calls (conversations for the per-turn roles) of `purpose` on `configuration`."""
    per_turn = purpose in (SIMULATE, TARGET)
    line = RoleLine(
        purpose, configuration, calls=0.0, max_calls=count * (run.turns if per_turn else 1)
    )
    if not count:
        return line
    if not per_turn:
        line.calls = float(count)
        asked, stored = history.judge_calls.get(configuration.pk, (0, 0))
        if purpose == JUDGE and stored:
            line.calls = count * asked / stored
            line.calls_n = stored
        count = line.calls
        found = history.tokens_for(configuration.pk, purpose, None)
        prompt, completion = found.mean() if found else prior_tokens(purpose, None, run, target)
        line.prompt_tokens, line.completion_tokens = prompt * count, completion * count
        line.token_n = found.n if found else 0
        return line
    learned, seen = history.calls_per_conversation(configuration.pk, purpose, run.turns)
    line.calls_n = seen
    # Without history, every conversation runs its full length, one call per turn.
    turn_calls = {
        k: (
            history.calls_at_turn.get((configuration.pk, purpose, k), 0) / seen
            if learned is not None
            else 1.0
        )
        for k in range(1, run.turns + 1)
    }
    n = 0
    for k, share in turn_calls.items():
        found = history.tokens_for(configuration.pk, purpose, k)
        prompt, completion = found.mean() if found else prior_tokens(purpose, k, run, target)
        n = max(n, found.n if found else 0)
        line.calls += share * count
        line.prompt_tokens += prompt * share * count
        line.completion_tokens += completion * share * count
    line.token_n = history.tokens[(configuration.pk, purpose, None)].n if n else 0
    return line


def _lines(run: EvaluationRun, history: History) -> tuple[list[RoleLine], Work]:
    targets = list(run.targets.all())
    seats = run_panel(run)
    work = work_count(run, targets, seats)
    checker = run.fidelity_checker or run.judge
    lines: list[RoleLine] = []
    for target in targets:
        simulate = work.to_simulate.get(target.pk, 0)
        lines.append(
            _line(history, run=run, purpose=SIMULATE, configuration=run.simulator, count=simulate)
        )
        lines.append(
            _line(
                history,
                run=run,
                purpose=TARGET,
                configuration=target,
                count=simulate,
                target=target,
            )
        )
        checks = work.anchor_checks.get(target.pk, 0)
        lines.append(_line(history, run=run, purpose=ANCHOR, configuration=run.judge, count=checks))
        if run.replicates >= RECHECK_MIN_REPLICATES:
            lines.append(
                _line(history, run=run, purpose=RECHECK, configuration=run.judge, count=checks)
            )
        fidelity = work.fidelity_checks.get(target.pk, 0)
        lines.append(
            _line(history, run=run, purpose=FIDELITY, configuration=checker, count=fidelity)
        )
    for seat in seats:
        readings = work.judge_readings.get(seat.index, 0)
        lines.append(
            _line(history, run=run, purpose=JUDGE, configuration=seat.judge, count=readings)
        )
    rubric = plans.rubric_plan(run, targets)
    if rubric.items:
        per_target = rubric.judge_calls // max(1, len(targets))
        for target in targets:
            lines.append(
                _line(
                    history,
                    run=run,
                    purpose=RUBRIC_REPLY,
                    configuration=target,
                    count=rubric.items,
                    target=target,
                )
            )
            lines.append(
                _line(
                    history,
                    run=run,
                    purpose=RUBRIC_GRADES,
                    configuration=run.judge,
                    count=per_target,
                )
            )
    return [line for line in lines if line.max_calls], work


def _configuration_estimate(
    configuration: ModelConfiguration, lines: list[RoleLine], history: History, in_flight: int
) -> ConfigurationEstimate:
    calls = sum(line.calls for line in lines)
    prompt = round(sum(line.prompt_tokens for line in lines))
    completion = round(sum(line.completion_tokens for line in lines))
    latency, latency_n = history.median_latency_ms(configuration.pk)
    if latency is None:
        latency = PRIOR_LATENCY_MS[configuration.is_offline]
    attempts, gateway_calls = history.attempts.get(configuration.pk, (1, 1))
    wall, limited_by = configuration_wall_seconds(
        configuration,
        calls=calls * attempts / gateway_calls,  # a retried attempt spends its tokens again
        prompt_tokens=prompt * attempts / gateway_calls,
        completion_tokens=completion * attempts / gateway_calls,
        latency_ms=latency,
        in_flight=in_flight,
    )
    return ConfigurationEstimate(
        configuration=configuration,
        roles=list(dict.fromkeys(line.role for line in lines)),
        calls=calls,
        max_calls=sum(line.max_calls for line in lines),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=_lines_cost(configuration, lines) if price_known(configuration) else None,
        # A purpose learned once counts once, however many targets' lines share it.
        token_n=sum({line.purpose: line.token_n for line in lines}.values()),
        latency_ms=latency,
        latency_n=latency_n,
        wall_seconds=wall,
        limited_by=limited_by,
    )


def _lines_cost(configuration: ModelConfiguration, lines: list[RoleLine]) -> Decimal:
    """The lines' cost: those sent by batch at the configuration's batch price."""
    cost = Decimal(0)
    for batched in (False, True):
        mine = [line for line in lines if line.batched is batched]
        if mine:
            cost += configuration.cost_estimate(
                prompt_tokens=round(sum(line.prompt_tokens for line in mine)),
                completion_tokens=round(sum(line.completion_tokens for line in mine)),
                batched=batched,
            )
    return cost


def run_estimate(run: EvaluationRun) -> RunEstimate:
    """Calls, tokens, cost and wall time of what launching (or resuming) the run would do."""
    configuration_ids = {run.simulator_id, run.judge_id, run.fidelity_checker_id}
    configuration_ids |= {t.pk for t in run.targets.all()}
    configuration_ids |= {seat.judge.pk for seat in run_panel(run)}
    history = history_read(
        configuration_ids=configuration_ids - {None}, turns=run.turns, exclude_run_id=run.pk
    )
    lines, work = _lines(run, history)
    if run.use_batch:
        for line in lines:
            line.batched = line.purpose not in (SIMULATE, TARGET, RUBRIC_REPLY) and (
                batch_supported(line.configuration)
            )
    in_flight = max(1, min(settings.ENGINE_BATCH_SIZE, work.conversations or 1))
    grouped: dict[int, list[RoleLine]] = defaultdict(list)
    for line in lines:
        grouped[line.configuration.pk].append(line)
    estimates = [
        _configuration_estimate(group[0].configuration, group, history, in_flight)
        for group in grouped.values()
    ]
    wall, basis = run_wall_seconds(estimates, lines, work, in_flight, history)
    notes = [
        _(
            "Retries after errors and re-asks of unusable output are not counted as calls "
            "(their tokens are in the learned tokens per call); judge readings asked again "
            "and cut-off replies asked again are, from history."
        )
    ]
    if any(line.batched for line in lines):
        notes.append(
            _(
                "Judging and checks go by batch: priced at the batch price, and the providers "
                "may take up to 24 hours to answer them, which the wall time does not count."
            )
        )
    if work.simulated:
        notes.append(
            _("%(n)s conversations are already simulated: only their checks and judgments remain.")
            % {"n": work.simulated}
        )
    return RunEstimate(
        lines=lines,
        configurations=estimates,
        conversations=work.conversations,
        simulated=work.simulated,
        wall_seconds=wall,
        wall_basis=basis,
        notes=notes,
    )
