from collections import Counter
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from evaluations.models import AnchorCoverage, Conversation, EvaluationRun, RunStatus
from evaluations.services import runs
from evaluations.services.estimates import (
    FIDELITY,
    JUDGE,
    PRIOR_LATENCY_MS,
    SIMULATE,
    TARGET,
    run_estimate,
)
from evaluations.services.run_plans import run_scenarios
from evaluations.services.swap import swap_study_create
from llm.models import LLMCall, ModelRole
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401 - fixture
from tests.llm.factories import (
    LLMCallFactory,
    ModelConfigurationFactory,
    OfflineConfigurationFactory,
)

pytestmark = pytest.mark.django_db


def _calls_by_role(estimate) -> Counter:
    counted: Counter = Counter()
    for line in estimate.lines:
        counted[line.role] += line.max_calls
    return counted


def _with_anchors(run: EvaluationRun) -> int:
    return sum(1 for anchors in run_scenarios(run).values_list("anchors", flat=True) if anchors)


def test_calls_are_counted_from_the_design(offline_release):  # noqa: F811
    run = offline_run(offline_release, turns=3, judgments_per_conversation=3)
    scenarios = run_scenarios(run).count()
    conversations = scenarios * 2
    estimate = run_estimate(run)
    assert estimate.conversations == conversations
    assert _calls_by_role(estimate) == {
        "simulator": conversations * 3,
        "target": conversations * 3,
        "anchor check": _with_anchors(run) * 2,
        "fidelity check": conversations,
        "judge": conversations * 3,
    }
    # Without history every conversation is assumed to run its full length.
    assert estimate.calls == estimate.max_calls


def test_replicates_add_the_anchor_recheck_and_a_panel_its_readings(offline_release):  # noqa: F811
    second = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Panel",
        release=offline_release,
        targets=[OfflineConfigurationFactory()],
        simulator=OfflineConfigurationFactory(),
        judge=OfflineConfigurationFactory(),
        further_judges=[(second, 1)],
        turns=2,
        replicates=2,
        judgments_per_conversation=3,
    )
    conversations = run_scenarios(run).count() * 2
    counted = _calls_by_role(run_estimate(run))
    assert counted["judge"] == conversations * (3 + 1)
    assert counted["anchor recheck"] == counted["anchor check"] == _with_anchors(run) * 2
    judged_by = {
        line.configuration.pk: line.max_calls
        for line in run_estimate(run).lines
        if line.purpose == JUDGE
    }
    assert judged_by == {run.judge_id: conversations * 3, second.pk: conversations}


@pytest.mark.slow(reason="runs an offline base run and its swap study inline")
def test_a_judge_swap_counts_only_the_calls_it_makes(offline_release):  # noqa: F811
    base = offline_run(offline_release, turns=2)
    runs.run_launch(run=base, dispatch=False)
    runs.run_process_inline(run_id=base.pk)
    base.refresh_from_db()
    strict = OfflineConfigurationFactory(extra_params={"offline_profile": "strict"})
    study = swap_study_create(base_run=base, judge=strict, sample_size=5, seed=3)
    swap = study.swap_run
    copies = Conversation.objects.filter(run=swap)
    uncovered = sum(
        1
        for c in copies
        if c.scenario.anchors and not AnchorCoverage.objects.filter(conversation=c).exists()
    )
    estimate = run_estimate(swap)
    assert estimate.simulated == estimate.conversations == copies.count() == 10
    counted = _calls_by_role(estimate)
    assert counted == Counter(
        {
            "fidelity check": 10,
            "judge": 10 * 3,
            **({"anchor check": uncovered} if uncovered else {}),
        }
    )
    assert "simulator" not in counted
    assert "target" not in counted
    runs.run_launch(run=swap, dispatch=False)
    runs.run_process_inline(run_id=swap.pk)
    made = LLMCall.objects.filter(run_id=swap.pk).values("group_id").distinct().count()
    assert made == estimate.calls


def _seed_history(run: EvaluationRun, *, simulator, target, judge) -> None:
    """Two finished conversations of an earlier two-turn run, then the run finished: one full,
    one stopped after the simulator's second call; every figure chosen so the estimate can be
    worked out by hand."""
    rows = [
        # (work item, purpose, configuration, prompt, completion)
        ("conversation:1", SIMULATE, simulator, 100, 10),
        ("conversation:1", TARGET, target, 50, 200),
        ("conversation:1", SIMULATE, simulator, 300, 20),
        ("conversation:1", TARGET, target, 150, 400),
        ("conversation:1", FIDELITY, judge, 700, 60),
        ("conversation:1", JUDGE, judge, 1000, 100),
        ("conversation:2", SIMULATE, simulator, 120, 14),
        ("conversation:2", TARGET, target, 70, 220),
        ("conversation:2", SIMULATE, simulator, 320, 30),  # stops: no second target call
        ("conversation:2", FIDELITY, judge, 500, 40),
        ("conversation:2", JUDGE, judge, 600, 80),
    ]
    for work_item, purpose, configuration, prompt, completion in rows:
        LLMCallFactory(
            configuration=configuration,
            role=ModelRole.JUDGE,
            purpose=purpose,
            run_id=run.pk,
            work_item=work_item,
            prompt_tokens=prompt,
            completion_tokens=completion,
            latency_ms=400,
        )
    # Finished 11 s after it started: one second a call.
    now = timezone.now()
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.COMPLETED, started_at=now - timedelta(seconds=11), finished_at=now
    )


def test_tokens_and_early_stops_are_learned_from_the_call_log(offline_release):  # noqa: F811
    simulator = ModelConfigurationFactory(name="Sim")  # $2 / $8 per million
    target = ModelConfigurationFactory(name="Target")
    judge = ModelConfigurationFactory(name="Judge")

    def make():
        return runs.run_create(
            name="Priced",
            release=offline_release,
            targets=[target],
            simulator=simulator,
            judge=judge,
            turns=2,
            judgments_per_conversation=1,
        )

    earlier = make()
    _seed_history(earlier, simulator=simulator, target=target, judge=judge)
    run = make()
    n = run_scenarios(run).count()
    estimate = run_estimate(run)
    lines = {line.purpose: line for line in estimate.lines}
    # Simulator: turn 1 mean (110, 12), turn 2 mean (310, 25); both conversations reach turn 2.
    assert lines[SIMULATE].calls == 2 * n
    assert lines[SIMULATE].prompt_tokens == pytest.approx(n * (110 + 310))
    assert lines[SIMULATE].completion_tokens == pytest.approx(n * (12 + 25))
    # Target: turn 1 in both (60, 210), turn 2 in one of two (150, 400).
    assert lines[TARGET].calls == pytest.approx(1.5 * n)
    assert lines[TARGET].prompt_tokens == pytest.approx(n * (60 + 0.5 * 150))
    assert lines[TARGET].completion_tokens == pytest.approx(n * (210 + 0.5 * 400))
    assert lines[TARGET].max_calls == 2 * n
    assert lines[FIDELITY].prompt_tokens == pytest.approx(n * 600)
    assert lines[JUDGE].completion_tokens == pytest.approx(n * 90)
    by_name = {c.configuration.name: c for c in estimate.configurations}
    assert by_name["Target"].token_n == 3
    assert by_name["Target"].token_basis == "history, 3 calls"
    # Cost at the configurations' prices, from the learned tokens.
    target_cost = (Decimal(round(n * 135)) * 2 + Decimal(round(n * 410)) * 8) / 1_000_000
    assert by_name["Target"].cost == target_cost.quantize(Decimal("0.00000001"))
    assert by_name["Judge"].latency_ms == 400
    assert by_name["Judge"].latency_n == 4
    # The earlier run kept 11 s for 11 calls: one second a call.
    assert estimate.wall_seconds == pytest.approx(estimate.calls * 1.0, rel=1e-3)
    assert "pace of 1 earlier runs" in estimate.wall_basis


def _rate_limited_run(release, name: str):
    """A fresh run of `release` whose every role is one configuration of 60 requests a minute
    and 4 at once; (the configuration, the run)."""
    limited = ModelConfigurationFactory(requests_per_minute=60, max_concurrency=4)
    run = runs.run_create(
        name=name,
        release=release,
        targets=[limited],
        simulator=limited,
        judge=limited,
        turns=2,
        judgments_per_conversation=1,
    )
    return limited, run


def test_without_history_the_prior_is_used_and_said(offline_release):  # noqa: F811
    _limited, run = _rate_limited_run(offline_release, "Fresh")
    estimate = run_estimate(run)
    (only,) = estimate.configurations
    assert only.token_n == 0
    assert only.token_basis == "prior (prompt lengths)"
    # One request a second at most: the rate limit, not the latency, bounds the run, and says so.
    assert only.latency_basis == (
        f"prior latency {PRIOR_LATENCY_MS[False]:.0f} ms; limited by 60 requests per minute"
    )
    assert only.prompt_tokens > 0
    assert only.wall_seconds == pytest.approx(only.calls)
    assert estimate.wall_seconds == pytest.approx(only.calls)


@pytest.mark.parametrize("side", ["input", "output"])
def test_a_token_budget_bounds_the_wall_time_when_it_binds(offline_release, side):  # noqa: F811
    """At 60 requests a minute a run of N calls takes N seconds; a token budget per minute
    smaller than a second's worth of its tokens takes longer, and the estimate says which."""
    limited, run = _rate_limited_run(offline_release, "Token-bound")
    (unbounded,) = run_estimate(run).configurations
    tokens = unbounded.prompt_tokens if side == "input" else unbounded.completion_tokens
    # A budget that lets through a tenth of what a minute of requests would carry.
    per_minute = max(1, round(tokens / unbounded.calls * 60 / 10))
    setattr(limited, f"{side}_tokens_per_minute", per_minute)
    limited.save()
    (bound,) = run_estimate(run).configurations
    assert bound.wall_seconds == pytest.approx(tokens / per_minute * 60, rel=1e-6)
    assert bound.wall_seconds > 9 * unbounded.wall_seconds
    assert bound.latency_basis.endswith(f"limited by {per_minute} {side} tokens per minute")
    # A generous budget changes nothing: the request rate still binds.
    setattr(limited, f"{side}_tokens_per_minute", tokens * 100)
    limited.save()
    (generous,) = run_estimate(run).configurations
    assert generous.wall_seconds == pytest.approx(unbounded.wall_seconds)
    assert generous.latency_basis.endswith("limited by 60 requests per minute")


@pytest.mark.slow(reason="a release with scenarios, and the command's plan and estimate")
def test_a_configuration_without_prices_has_an_unknown_cost(offline_release):  # noqa: F811
    unpriced = ModelConfigurationFactory(
        name="Unpriced",
        price_per_million_input_tokens=Decimal(0),
        price_per_million_output_tokens=Decimal(0),
    )
    free = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Mixed",
        release=offline_release,
        targets=[unpriced],
        simulator=free,
        judge=free,
        turns=1,
    )
    estimate = run_estimate(run)
    by_name = {c.configuration.name: c for c in estimate.configurations}
    assert by_name["Unpriced"].cost is None
    assert by_name[free.name].cost == 0
    assert estimate.price_unknown == ["Unpriced"]
    out = StringIO()
    call_command("run_evaluation", "--run", str(run.pk), "--dry-run", stdout=out)
    printed = out.getvalue()
    assert "price unknown" in printed
    assert "Dry run: nothing launched" in printed
    run.refresh_from_db()
    assert run.status == RunStatus.DRAFT
    assert not LLMCall.objects.filter(run_id=run.pk).exists()


@pytest.mark.slow(reason="a release with generated scenarios and the whole run page rendered")
def test_the_draft_run_page_shows_the_estimate_per_configuration(
    offline_release,  # noqa: F811
    client_for,
    maintainer,
    django_assert_max_num_queries,
):
    unpriced = ModelConfigurationFactory(
        name="Unpriced",
        price_per_million_input_tokens=Decimal(0),
        price_per_million_output_tokens=Decimal(0),
    )
    free = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Shown", release=offline_release, targets=[unpriced], simulator=free, judge=free
    )
    client = client_for(maintainer)
    url = reverse("evaluations:run-detail", args=[run.pk])
    # 33: the page also reads where the run's transcripts come from (imported or simulated).
    with django_assert_max_num_queries(33):
        page = client.get(url)
    shown = page.content.decode().split('data-testid="run-estimate"')[1]
    assert "Price unknown for Unpriced" in shown
    assert "prior (prompt lengths)" in shown
    assert f"Estimated {run_estimate(run).calls} model calls" in shown


def test_the_estimate_reads_in_a_fixed_number_of_queries(
    offline_release,  # noqa: F811
    django_assert_num_queries,
):
    run = offline_run(offline_release, turns=2)
    run = EvaluationRun.objects.select_related("simulator", "judge", "fidelity_checker").get(
        pk=run.pk
    )
    # The run's metric versions, its swap sample, scenarios, stored conversations, targets
    # (twice), the panel, the call log and the rubric items: however many there are of each.
    with django_assert_num_queries(9):
        run_estimate(run)


def test_the_spending_cap_is_checked_against_the_learned_estimate(offline_release):  # noqa: F811
    """The prior assumes long prompts and replies; an earlier run's call log says they are
    short. A cap between the two lets the run start, and one below the learned cost does not."""
    from core.exceptions import ApplicationError

    simulator = ModelConfigurationFactory(name="Sim")  # $2 / $8 per million
    target = ModelConfigurationFactory(name="Target")
    judge = ModelConfigurationFactory(name="Judge")

    def make(cap=None):
        return runs.run_create(
            name="Capped",
            release=offline_release,
            targets=[target],
            simulator=simulator,
            judge=judge,
            turns=2,
            judgments_per_conversation=1,
            spending_cap=cap,
        )

    prior = run_estimate(make()).cost
    earlier = make()
    _seed_history(earlier, simulator=simulator, target=target, judge=judge)
    learned = run_estimate(make()).cost
    assert learned < prior
    between = ((learned + prior) / 2).quantize(Decimal("0.000001"))
    started = runs.run_launch(run=make(between), dispatch=False)
    assert started.status == RunStatus.RUNNING
    below = (learned * Decimal("0.9")).quantize(Decimal("0.000001"))
    refused = f"exceeds this run's spending cap of \\${below:.2f}"
    with pytest.raises(ApplicationError, match=refused):
        runs.run_launch(run=make(below), dispatch=False)
