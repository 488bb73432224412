"""Concurrent raters claiming and submitting on PostgreSQL: latency and over-assignment.

Creates a scratch database, migrates it, fills one rating queue with --items items (3 ratings
each), then starts --raters raters spread over worker processes (each rater a thread with its
own database connection) who repeatedly claim an item, run a bare single-row SELECT as a
same-moment baseline, and submit a rating. Prints p50/p95 claim latency as a ratio to that
SELECT, and how many items ended with more ratings or claims than required (must be 0).
The scratch database is dropped at the end.

    .venv/bin/python benchmarks/review_assignment.py [--items 100000] [--raters 50]
        [--rounds 40] [--processes 10] [--database-url postgres://postgres@127.0.0.1:5432/postgres]

The database URL names the server (any existing database on it works for CREATE DATABASE);
DATABASE_URL is used when set.
"""

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=40, help="claims per rater")
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    return parser.parse_args()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def admin_execute(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(with_database(url, "postgres"), autocommit=True) as conn:
        conn.execute(sql)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def rater_thread(queue_id: int, rater_id: int, rounds: int, out: list, start) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection, connections

    from review.models import RatingQueue
    from review.services import assignment_claim, rating_submit

    try:
        rater = get_user_model().objects.get(pk=rater_id)
        queue = RatingQueue.objects.get(pk=queue_id)
        start.wait()
        for round_number in range(rounds):
            began = time.perf_counter()
            assignment = assignment_claim(queue=queue, rater=rater)
            claim_seconds = time.perf_counter() - began
            if assignment is None:
                break
            began = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM review_queueitem WHERE id = %s", [assignment.item_id]
                )
                cursor.fetchone()
            select_seconds = time.perf_counter() - began
            answer = ("faithful", "partly", "unfaithful")[(rater_id + round_number) % 3]
            rating_submit(assignment=assignment, rater=rater, answers={"fidelity": answer})
            out.append((claim_seconds, select_seconds))
    finally:
        connections.close_all()


def worker_process(queue_id: int, rater_ids: list[int], rounds: int, results, barrier) -> None:
    import django

    django.setup()
    out: list[tuple[float, float]] = []
    # Threads of this process start together with every other process's threads.
    local = threading.Barrier(len(rater_ids) + 1)
    threads = [
        threading.Thread(target=rater_thread, args=(queue_id, rid, rounds, out, local))
        for rid in rater_ids
    ]
    for thread in threads:
        thread.start()
    barrier.wait()
    local.wait()
    for thread in threads:
        thread.join()
    results.put(out)


def main() -> None:
    args = parse_args()
    scratch = f"impactbench_bench_review_{os.getpid()}"
    admin_execute(args.database_url, f'CREATE DATABASE "{scratch}"')
    os.environ["DATABASE_URL"] = with_database(args.database_url, scratch)
    os.environ["DJANGO_SETTINGS_MODULE"] = "impactbench_site.settings.test"
    os.environ.setdefault("CELERY_BROKER_URL", "memory://")
    try:
        run(args)
    finally:
        from django.db import connections

        connections.close_all()
        admin_execute(args.database_url, f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


def run(args: argparse.Namespace) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, connections

    from core.roles import Role
    from review.kinds import Candidate
    from review.models import QueueItem, Rating
    from review.services import queue_create
    from tests.factories import UserFactory

    began = time.perf_counter()
    call_command("migrate", verbosity=0)
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(args.raters)]
    subareas = ("agency-purpose", "physical-health", "law", "creativity")
    candidates = [
        Candidate(
            object_id=i + 1,
            strata={"subarea": subareas[i % 4], "age_context": ("teen", "adult")[i % 2]},
        )
        for i in range(args.items)
    ]
    queue = queue_create(
        name="Benchmark",
        kind="metric",
        created_by=None,
        size=args.items,
        strata=["subarea", "age_context"],
        required_ratings=3,
        seed=1,
        candidates=candidates,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE review_queueitem")
        cursor.execute("ANALYZE review_assignment")
    print(
        f"setup: {args.items:,} items, {args.raters} raters in {time.perf_counter() - began:.1f} s"
    )

    from review.services.assignments import _open_items_for

    # The plan of the claim query without FOR UPDATE (EXPLAIN of a locking read needs a
    # transaction; the index choice is the same).
    plan_sql, params = _open_items_for(queue, raters[0])[:1].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {plan_sql}", params)  # noqa: S608 - our own ORM SQL
        plan = [row[0] for row in cursor.fetchall()]
    uses_index = any("queue_item_open_slots" in line for line in plan)
    print(f"claim query uses the open-slots partial index: {uses_index}")

    connections.close_all()  # forked workers must not share this connection
    processes = max(1, min(args.processes, args.raters))
    groups = [[r.pk for r in raters[i::processes]] for i in range(processes)]
    context = mp.get_context("fork")
    results = context.Queue()
    barrier = context.Barrier(processes + 1)
    workers = [
        context.Process(
            target=worker_process, args=(queue.pk, group, args.rounds, results, barrier)
        )
        for group in groups
    ]
    for worker in workers:
        worker.start()
    barrier.wait()
    began = time.perf_counter()
    samples: list[tuple[float, float]] = []
    for _ in workers:
        samples.extend(results.get())
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began

    claims = [c for c, _ in samples]
    selects = [s for _, s in samples]
    over = QueueItem.objects.raw(
        "SELECT id FROM review_queueitem WHERE ratings_done + claims_open > required"
    )
    over_count = len(list(over))
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM (
                SELECT r.item_id FROM review_rating r JOIN review_queueitem i ON i.id = r.item_id
                WHERE NOT r.undone GROUP BY r.item_id, i.required HAVING count(*) > i.required
            ) AS over_rated
            """
        )
        over_rated = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM (SELECT item_id, rater_id FROM review_rating WHERE NOT undone "
            "GROUP BY item_id, rater_id HAVING count(*) > 1) AS twice"
        )
        twice = cursor.fetchone()[0]
    submitted = Rating.objects.current().count()
    p50_claim, p95_claim = percentile(claims, 0.5), percentile(claims, 0.95)
    p50_select, p95_select = percentile(selects, 0.5), percentile(selects, 0.95)
    print(
        f"{submitted:,} ratings by {args.raters} raters in {processes} processes, "
        f"{elapsed:.1f} s ({submitted / elapsed:.0f} claim+submit per second)"
    )
    print(
        f"claim latency   p50 {p50_claim * 1000:.2f} ms   p95 {p95_claim * 1000:.2f} ms   "
        f"mean {statistics.fmean(claims) * 1000:.2f} ms"
    )
    print(f"bare SELECT     p50 {p50_select * 1000:.2f} ms   p95 {p95_select * 1000:.2f} ms")
    print(f"claim / SELECT  p50 {p50_claim / p50_select:.1f}x   p95 {p95_claim / p95_select:.1f}x")
    print(f"over-assigned items (counters): {over_count}")
    print(f"over-rated items (ratings > required): {over_rated}")
    print(f"items rated twice by one rater: {twice}")
    if over_count or over_rated or twice:
        sys.exit(1)


if __name__ == "__main__":
    main()
