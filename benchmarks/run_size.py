"""Cost per call as a run grows: the pipeline at 400, 4,000 (and 40,000) conversations.

For each size the script runs the evaluation pipeline as `pipeline_throughput.py` does (real
Celery workers on PostgreSQL and Redis, the normal `run_create` → `run_launch` path) against
`fake_endpoint.py` at a low latency, then measures on the finished run, with its full volume
of rows in the database:

- CPU per call (the worker processes' utime+stime from the first call to the run's end) and
  wall per call and per conversation (first request at the endpoint to the run's end), peak
  worker RSS, database growth per conversation;
- the run page (full render) and its progress partial (the htmx request the live page polls),
  `run_progress`, one reaper pass (`runs_reap`), claiming and renewing a batch of 128
  conversations (`claims_take`, `claims_renew`): each timed (best of 3) with its SQL query
  count, in a transaction rolled back afterwards in which the run is running again and 128 of
  its conversations are pending (a run near its end: the scans see every finished row);
- the end-of-run refresh (`results_refresh`, best of two), per conversation.

Each figure is printed beside its ratio to the first (smallest) size in the same process:
flat means ratio ≈ 1 for per-call, per-conversation and per-pass figures. Then PASS/MISS of
the targets: each of those figures at the largest size within 1.2x of the smallest's (page
figures with the same query count), the largest worker process within 1 GiB at every size,
the accounting exact at every size. Exits 1 if the accounting is wrong at any size.

    DATABASE_URL=postgres://postgres@127.0.0.1/ib_x CELERY_BROKER_URL=redis://127.0.0.1:6379/9 \
        .venv/bin/python benchmarks/run_size.py [--sizes 400,4000] [--full] [--turns 2]
"""

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Import from the repository root, not this folder: a script named like a package would
# shadow it for every library that probes for it (numba looks for `coverage`).
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

from benchmarks.workers import (  # noqa: E402
    SETTINGS_MODULE,
    database_create,
    database_drop,
    journals_clear,
    queues_purge,
    workers_start,
)

CLAIM_BATCH = 128
# The targets: every per-call, per-conversation and per-page figure at the largest size within
# 1.2x of the smallest's (page figures with the same queries), every worker process within
# 1 GiB at every size, and the accounting exact at every size.
FLAT = 1.2
PER_CALL = ("CPU ms/call", "wall ms/call", "wall ms/conv", "refresh ms/conv")
PER_PAGE = (
    "run page",
    "progress partial",
    "run_progress",
    "reaper pass",
    "claims_take 128",
    "claims_renew 128",
)
RSS_BOUND_MIB = 1024
SLOWEST: dict = {}  # figure -> (ms, SQL) of the slowest statement of its best call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="400,4000", help="conversations per run, comma list")
    parser.add_argument("--full", action="store_true", help="add 40,000 conversations")
    parser.add_argument("--latency", type=float, default=0.02, help="endpoint seconds per call")
    parser.add_argument("--concurrency", type=int, default=256, help="model max_concurrency")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-concurrency", type=int, default=2, help="threads per worker")
    parser.add_argument("--pool", default="threads")
    parser.add_argument("--queues", default="llm,default")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--judgments", type=int, default=1)
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not base.startswith(("postgres://", "postgresql://")) or not broker.startswith("redis://"):
        sys.exit("Set DATABASE_URL to PostgreSQL and CELERY_BROKER_URL to Redis (see --help).")
    sizes = [int(x) for x in args.sizes.split(",")] + ([40_000] if args.full else [])
    scratch = database_create(base)
    os.environ["DATABASE_URL"] = scratch
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS_MODULE
    errors = 0
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        journals_clear()
        queues_purge(args.queues.split(","))
        rows = []
        for size in sizes:
            figures, wrong = size_run(args, size, scratch)
            errors += wrong
            rows.append((size, figures))
            table_print(rows)
        targets_print(rows, errors)
    finally:
        from django.db import connections

        connections.close_all()
        database_drop(base, scratch)
    sys.exit(1 if errors else 0)


# --- one size --------------------------------------------------------------------------------


def size_run(args, size: int, scratch: str) -> tuple[dict, int]:
    from benchmarks.fake_endpoint import EndpointProcess
    from benchmarks.pipeline_throughput import accounting_print, run_prepare
    from evaluations.models import RunStatus
    from evaluations.services import runs

    endpoint = EndpointProcess(args.latency).start()
    workers = None
    try:
        args.conversations = size
        model, run = run_prepare(args, endpoint.base_url, args.concurrency, f"{size}")
        db_before = _database_bytes()
        workers = workers_start(args, args.workers, args.worker_concurrency, scratch)
        endpoint.reset()
        runs.run_launch(run=run)
        run.refresh_from_db()
        planned = run.conversations_total
        print(
            f"\n== {planned} conversations × {args.turns} turns + {args.judgments} judgment(s), "
            f"{args.latency * 1000:.0f} ms endpoint, C={args.concurrency}; {args.workers} "
            f"worker(s) × {args.worker_concurrency} threads; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            flush=True,
        )
        cpu_start = None
        peak_rss = peak_process = 0
        seen, stalled_since = -1, time.monotonic()
        while True:
            stats = endpoint.stats()
            if cpu_start is None and stats["requests"]:
                cpu_start = workers.cpu_seconds()
            peak_rss = max(peak_rss, workers.rss())
            peak_process = max(peak_process, workers.largest_rss())
            run.refresh_from_db(fields=["status"])
            if run.status in (RunStatus.COMPLETED, RunStatus.FAILED):
                break
            if stats["requests"] != seen:
                seen, stalled_since = stats["requests"], time.monotonic()
            elif time.monotonic() - stalled_since > 120:
                print("   no progress for 120 s: stopping this size")
                break
            time.sleep(0.5)
        ended = time.monotonic()
        cpu = workers.cpu_seconds() - (cpu_start or 0.0)
        served = endpoint.stats()
        workers.stop()
        workers = None
        queues_purge(args.queues.split(","))  # the refresh the run's end queued: timed below
        wrong = accounting_print(args, run, model, planned, served["requests"])
        calls = max(1, served["requests"])
        wall = ended - (served["first_start"] or ended)
        figures = {
            "calls": served["requests"],
            "CPU ms/call": cpu / calls * 1000,
            "wall ms/call": wall / calls * 1000,
            "wall ms/conv": wall / planned * 1000,
            "peak RSS MiB": peak_rss / 2**20,
            "peak RSS MiB/process": peak_process / 2**20,
            "DB KiB/conv": (_database_bytes() - db_before) / planned / 1024,
        }
        figures.update(near_end_costs(run))
        figures["refresh ms/conv"] = _refresh_seconds(run) / planned * 1000
        return figures, wrong
    finally:
        if workers:
            workers.stop()
        endpoint.stop()


def near_end_costs(run) -> dict:
    """Page, progress, reaper and claim costs with the run's rows in place (rolled back)."""
    from django.conf import settings
    from django.db import connection, transaction
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from core.roles import Role
    from evaluations.models import Conversation, EvaluationRun, RunStatus
    from evaluations.selectors import run_progress
    from evaluations.services.claims import claims_renew, claims_take
    from evaluations.services.reaper import runs_reap
    from tests.factories import UserFactory

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's host
    user = UserFactory(roles=[Role.CONTRIBUTOR, Role.MAINTAINER])
    client = Client()
    client.force_login(user)
    page = reverse("evaluations:run-detail", args=[run.pk])
    figures = {}
    with connection.cursor() as cursor:
        # Fresh planner statistics, as autovacuum keeps them in a deployment (it may be off on
        # a benchmark server, and plans made on a freshly filled table's defaults mislead).
        cursor.execute("ANALYZE")
    with transaction.atomic():
        EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, finished_at=None)
        ids = list(
            Conversation.objects.filter(run=run)
            .order_by("-pk")
            .values_list("pk", flat=True)[:CLAIM_BATCH]
        )

        Conversation.objects.filter(pk__in=ids).update(
            status="pending", lease_expires_at=None, claimed_by="", dispatched_at=timezone.now()
        )
        live = EvaluationRun.objects.get(pk=run.pk)
        figures["run page"] = _timed(lambda: _get(client, page, {}), "run page")
        figures["progress partial"] = _timed(
            lambda: _get(client, page, {"HTTP_HX_REQUEST": "true"}), "progress partial"
        )
        figures["run_progress"] = _timed(lambda: run_progress(run=live), "run_progress")
        figures["reaper pass"] = _timed(runs_reap, "reaper pass")

        def claim_and_renew():
            sid = transaction.savepoint()
            claims = claims_take(Conversation, pks=ids, worker="bench")
            if len(claims) != len(ids):
                raise RuntimeError(f"claimed {len(claims)} of {len(ids)}")
            renew = _timed(lambda: claims_renew(list(claims.values())), "claims_renew 128", 1)
            transaction.savepoint_rollback(sid)
            return renew

        renewals = []
        claim_once = lambda: renewals.append(claim_and_renew())  # noqa: E731
        figures["claims_take 128"] = _timed(claim_once, "claims_take 128")
        figures["claims_renew 128"] = min(renewals, key=lambda pair: pair[0])
        transaction.set_rollback(True)
    return figures


def _get(client, path: str, headers: dict) -> None:
    response = client.get(path, **headers)
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}")


def _timed(func, name: str = "", repeats: int = 3) -> tuple[float, int]:
    """Best of `repeats` in ms, and the SQL queries of one call."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    best, queries = float("inf"), 0
    for _ in range(repeats):
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            func()
            elapsed = time.perf_counter() - start
        if elapsed * 1000 < best:
            best, slowest = elapsed * 1000, max(captured, key=lambda q: float(q["time"]))
        queries = len(captured)
    if name:
        SLOWEST[name] = (float(slowest["time"]) * 1000, slowest["sql"])
    return best, queries


def _refresh_seconds(run) -> float:
    from results.services import results_refresh

    # Best of two: the first call in a process also compiles the resampling kernels.
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        results_refresh(run=run)
        timings.append(time.perf_counter() - start)
    return min(timings)


def _database_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0]


# --- the table -------------------------------------------------------------------------------


def table_print(rows: list[tuple[int, dict]]) -> None:
    """Each figure per size with its ratio to the first size (timed ones: ms, queries)."""
    first = rows[0][1]
    print(f"\n   {'figure':22}" + "".join(f"{size:>26,}" for size, _ in rows))
    for name in first:
        cells = []
        for _size, figures in rows:
            value, base = figures[name], first[name]
            if isinstance(value, tuple):
                ratio = value[0] / base[0] if base[0] else math.nan
                cells.append(f"{value[0]:9.1f} ms {value[1]:3d} q ×{ratio:5.2f}")
            else:
                ratio = value / base if base else math.nan
                cells.append(f"{value:15.2f} ×{ratio:5.2f}")
        print(f"   {name:22}" + "".join(f"{cell:>26}" for cell in cells))
    print(f"   load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    names = [name for name, value in rows[-1][1].items() if isinstance(value, tuple)]
    print(f"   slowest statement of each timed figure at {rows[-1][0]:,} conversations:")
    for name in names:
        ms, sql = SLOWEST[name]
        print(f"     {name:20} {ms:7.1f} ms  {sql[:150]}")


def targets_print(rows: list[tuple[int, dict]], errors: int) -> None:
    """PASS/MISS of each target, the largest size against the smallest."""
    (small, first), (large, last) = rows[0], rows[-1]
    print(f"\n   targets: {large:,} conversations against {small:,} (ratio ≤ {FLAT})")
    for name in PER_CALL + PER_PAGE:
        before, after = first[name], last[name]
        same_queries = True
        if isinstance(before, tuple):
            (before, queries_before), (after, queries_after) = before, after
            same_queries = queries_after == queries_before
        ratio = after / before if before else math.nan
        verdict = "PASS" if ratio <= FLAT and same_queries else "MISS"
        queries = "" if same_queries else f" (queries {queries_before} → {queries_after})"
        print(f"     {name:24} ×{ratio:5.2f}{queries}  {verdict}")
    largest = max(figures["peak RSS MiB/process"] for _, figures in rows)
    verdict = "PASS" if largest <= RSS_BOUND_MIB else "MISS"
    print(f"     largest worker process {largest:.0f} MiB (≤ {RSS_BOUND_MIB:,} MiB)  {verdict}")
    print(f"     accounting exact at every size  {'MISS' if errors else 'PASS'}", flush=True)


if __name__ == "__main__":
    main()
