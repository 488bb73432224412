"""The scoped refreshes and the full refresh's growth with the number of models, for
`aggregation.py` (which runs them in its scratch database and prints their ratios)."""

import json
import time

from benchmarks.common import best_time


def verdict(seconds: float, target: float) -> str:
    return "PASS" if seconds <= target else "MISS"


def scoped_refreshes(run, measured, n_resamples: int, repeats: int) -> list[tuple[str, float]]:
    """The refreshes a change to one model's conversations, one metric's, and one queue's
    ratings books (`refresh_for` with that change), each timed as `measured` times the others."""
    from evaluations.models import Conversation
    from results.services.refresh_scope import Change, refresh_for

    first = (
        Conversation.objects.filter(run=run)
        .order_by("pk")
        .values("target_id", "scenario__metric_version_id")[0]
    )
    changes = [
        ("one model's conversations", Change(targets=frozenset({first["target_id"]}))),
        (
            "one metric's conversations",
            Change(versions=frozenset({first["scenario__metric_version_id"]})),
        ),
        (
            "one queue's ratings (the blind panel)",
            Change(rating_kinds=frozenset({"external_panel"})),
        ),
    ]
    out = []
    for label, change in changes:

        def scoped(*, run, n_resamples, change=change):
            return refresh_for(run, change, n_resamples=n_resamples)

        seconds, _ = measured(f"refresh_for: {label}", scoped, "scoped", repeats, False)
        out.append((label, seconds))
    return out


def full_refresh_line(n_resamples: int, repeats: int) -> None:
    """Best-of-``repeats`` `results_refresh` and bare GROUP BY on this process's database, as
    one JSON line (the growth measurement's child)."""
    from django.db import connection

    from evaluations.models import Conversation, EvaluationRun
    from results.models import PassRateSummary
    from results.services import results_refresh

    run = EvaluationRun.objects.get(release__version="0.0.900")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")

    def bare_group_by():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT conversation_id, count(*) FROM evaluations_judgment "
                "GROUP BY conversation_id"
            )
            return len(cursor.fetchall())

    bare, _ = best_time(bare_group_by, 5)
    timings = []
    for _ in range(repeats):
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {PassRateSummary._meta.db_table}")
        start = time.perf_counter()
        results_refresh(run=run, n_resamples=n_resamples)
        timings.append(time.perf_counter() - start)
    line = {
        "seconds": min(timings),
        "bare": bare,
        "conversations": Conversation.objects.filter(run=run).count(),
        "models": len(run.targets.all()),
    }
    print(json.dumps(line))


def growth_lines(small: dict, large: dict) -> None:
    """The full refresh per conversation at both sizes, and how it grew (linear: ≤ 1.0)."""
    for size in (small, large):
        per = size["seconds"] / size["conversations"] * 1e6
        print(
            f"full refresh, {size['models']} models ({size['conversations']:,} conversations): "
            f"{size['seconds']:.2f} s = {per:,.1f} µs a conversation = "
            f"{size['seconds'] / size['bare']:,.1f} × its bare GROUP BY "
            f"({size['bare'] * 1000:.1f} ms)"
        )
    ratio = (large["seconds"] / large["conversations"]) / (
        small["seconds"] / small["conversations"]
    )
    grown = large["conversations"] / small["conversations"]
    print(
        f"  growth per conversation, {grown:.1f} × the conversations: {ratio:.2f} × "
        f"(target ≤ 1.0, linear) {'PASS' if ratio <= 1.0 else 'MISS'}"
    )
