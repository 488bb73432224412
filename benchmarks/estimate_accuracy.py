"""How close a run's estimate comes to what the run then makes: calls, tokens, cost, wall time.

The same small run is made twice in a scratch SQLite database: the first teaches the call log
(nothing learned before it, so its estimate rests on the prior), the second is estimated from
the first's call log and then run. For each run the estimate (`evaluations.services.estimates`)
is printed beside the actual figures from the call log and the clock, as ratios
(estimate ÷ actual; the target is 0.75-1.25 for calls, tokens and cost, 0.5-1.5 for wall time).

    .venv/bin/python benchmarks/estimate_accuracy.py                    # offline model
    .venv/bin/python benchmarks/estimate_accuracy.py --real-model       # starts the server
    .venv/bin/python benchmarks/estimate_accuracy.py --real-model --base-url http://127.0.0.1:18630/v1

With --real-model the small model of ../shared/realmodel (see benchmarks/real_model.py) plays
simulator, target and judge, one request at a time, with a price set so cost is compared too.
It answers a few tokens a second on 2 cores: the design is kept small (one turn, one metric
for one age group, one judgment).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]


def _django(scratch: str) -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.local",
            "IMPACTBENCH_VAR_DIR": scratch,
            "DATABASE_URL": f"sqlite:///{scratch}/db.sqlite3",
            "CELERY_BROKER_URL": "filesystem://",
            "LLM_TIMEOUT_SECONDS": "600",
            "LLM_LIMIT_MAX_WAIT_SECONDS": "7200",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _configurations(args):
    from decimal import Decimal

    from llm.models import ModelConfiguration

    if not args.real_model:
        offline = {"provider": "offline", "model_id": "offline-demo"}
        return {
            "simulator": ModelConfiguration.objects.create(name="Simulator", **offline),
            "judge": ModelConfiguration.objects.create(name="Judge", **offline),
            "targets": [
                ModelConfiguration.objects.create(
                    name=f"Target {profile}",
                    extra_params={"offline_profile": profile},
                    **offline,
                )
                for profile in ("careful", "agreeable")
            ],
        }
    model = ModelConfiguration.objects.create(
        name="SmolLM2",
        provider="openai_compatible",
        base_url=args.base_url,
        model_id="smollm2-135m",
        api_key_env="",
        max_tokens=args.max_tokens,
        max_concurrency=1,
        # A price, so the cost estimate is compared too (the model itself is free to run).
        price_per_million_input_tokens=Decimal("0.10"),
        price_per_million_output_tokens=Decimal("0.40"),
    )
    return {"simulator": model, "judge": model, "targets": [model]}


def _metric_versions(count: int, *, one_age_group: bool):
    from evaluations.services.scenarios import scenarios_generate
    from llm.models import ModelConfiguration
    from tests.evaluations.factories import current_version
    from tests.metrics_registry.factories import MetricFactory

    writer = ModelConfiguration.objects.create(
        name="Scenario writer", provider="offline", model_id="offline-demo"
    )
    versions = []
    for index in range(count):
        metric = MetricFactory(
            polarity="negative" if index % 2 else "positive",
            age_contexts="adult" if one_age_group else "both",
        )
        version = current_version(metric)
        scenarios_generate(metric_version=version, configuration=writer)
        versions.append(version)
    return versions


def _actual(run) -> dict:
    from django.db.models import Count, Sum

    from llm.models import CallOutcome, LLMCall

    rows = LLMCall.objects.filter(run_id=run.pk)
    made = rows.exclude(outcome=CallOutcome.CACHED).aggregate(
        prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost_estimate")
    )
    return {
        "calls": rows.values("group_id").distinct().count(),
        "attempts": rows.count(),
        "cached": rows.filter(outcome=CallOutcome.CACHED).count(),
        "tokens": (made["prompt"] or 0) + (made["completion"] or 0),
        "cost": made["cost"] or 0,
        "by_purpose": dict(
            rows.values_list("purpose").annotate(n=Count("group_id", distinct=True))
        ),
    }


def _ratio(estimate, actual) -> str:
    estimate, actual = float(estimate), float(actual)
    if not actual:
        return "n/a (both 0)" if not estimate else "n/a (actual 0)"
    return f"{estimate / actual:.2f}"


def one_run(label: str, configurations: dict, versions: list, args, seed: int) -> None:
    from evaluations.services import runs
    from evaluations.services.estimate_format import estimate_table
    from evaluations.services.estimates import run_estimate

    run = runs.run_create(
        name=label,
        metric_versions=versions,
        targets=configurations["targets"],
        simulator=configurations["simulator"],
        judge=configurations["judge"],
        turns=args.turns,
        judgments_per_conversation=args.judgments,
        seed=seed,
    )
    estimate = run_estimate(run)
    print(f"\n== {label}: estimate before launch ==")
    print(estimate_table(estimate))
    print(f"  wall time basis: {estimate.wall_basis}")
    started = time.monotonic()
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    wall = time.monotonic() - started
    run.refresh_from_db()
    actual = _actual(run)
    print(
        f"== {label}: run {run.status}, {run.conversations_completed} conversations done, "
        f"{run.conversations_failed} failed; {actual['attempts']} attempts, "
        f"{actual['cached']} cache hits =="
    )
    cost = estimate.cost or 0
    print(f"  {'figure':<10} {'estimate':>14} {'actual':>14} {'ratio':>14}")
    for name, guess, real in (
        ("calls", estimate.calls, actual["calls"]),
        ("tokens", estimate.tokens, actual["tokens"]),
        ("cost $", f"{cost:.6f}", f"{actual['cost']:.6f}"),
        ("wall s", f"{estimate.wall_seconds:.1f}", f"{wall:.1f}"),
    ):
        print(f"  {name:<10} {guess!s:>14} {real!s:>14} {_ratio(guess, real):>14}")
    guessed: dict[str, float] = {}
    for line in estimate.lines:
        guessed[line.purpose] = guessed.get(line.purpose, 0.0) + line.calls
    for purpose in sorted(set(guessed) | set(actual["by_purpose"])):
        real = actual["by_purpose"].get(purpose, 0)
        print(
            f"    {purpose:<34} calls {guessed.get(purpose, 0):8.1f} vs {real:5d}  "
            f"ratio {_ratio(guessed.get(purpose, 0), real)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-model", action="store_true")
    parser.add_argument("--base-url", help="A running server of the small model (…/v1).")
    parser.add_argument("--python", help="With --gguf: a llama-cpp-python to serve it with.")
    parser.add_argument("--gguf")
    parser.add_argument("--metrics", type=int, help="Metrics in the run (default 2; 1 real).")
    parser.add_argument("--turns", type=int, help="Turns (default 3; 1 with --real-model).")
    parser.add_argument("--judgments", type=int, help="Judgments (default 3; 1 real).")
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args()
    real = args.real_model
    args.metrics = args.metrics or (1 if real else 2)
    args.turns = args.turns or (1 if real else 3)
    args.judgments = args.judgments or (1 if real else 3)
    server = None
    if real and not args.base_url:
        from benchmarks.real_model import server_start

        server, args.base_url = server_start(args)
    scratch = tempfile.mkdtemp(prefix="estimate-accuracy-")
    try:
        _django(scratch)
        configurations = _configurations(args)
        versions = _metric_versions(args.metrics, one_age_group=real)
        print(
            f"{'real small model' if real else 'offline model'}: {args.metrics} metrics, "
            f"{len(configurations['targets'])} targets, {args.turns} turns, "
            f"{args.judgments} judgments"
        )
        # Different seeds: the second run is not answered from the first's response cache.
        one_run("first run (learns)", configurations, versions, args, seed=1)
        one_run("second run (estimated from the first)", configurations, versions, args, seed=2)
    finally:
        if server is not None:
            server.terminate()


if __name__ == "__main__":
    main()
