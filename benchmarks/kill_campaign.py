"""Issue 44's acceptance: SIGKILL of one and of all workers mid-run keeps the call log exact.

A no-fault baseline run, then runs (three by default) in each of two modes: when the fake
endpoint (benchmarks/fake_endpoint.py, its own process) has served `--kill-at` of the
baseline's calls, SIGKILL goes to the whole process group of ONE worker, or of ALL workers;
the killed ones are started again ~1 s later and the run is left to finish by itself, its
killed conversations handed out again by the reaper, which a separate `celery beat` process
(never killed) schedules. Workers and beat get the fast recovery settings of
tests/evaluations/test_run_recovery.py (FAST_RECOVERY). Every run has its own scratch
database (migrated), purged queues, cleared call journals and a fresh endpoint, and is made
as benchmarks/pipeline_throughput.py makes its runs (`run_prepare`, then `runs.run_launch`).

Printed per run: requests the endpoint received against the HTTP rows of the call log
(LLMCall, outcome not "cached") and how many of them are "unknown" (restored from a killed
worker's journal); tokens the endpoint billed (replies written out whole) against tokens
logged (prompt + completion), their gap and its share of the bill; conversations completed
and failed, completed ones whose turns are not 1..n or whose judgments are incomplete; wall
time against the baseline's; "to dead": replies (and their tokens) the endpoint wrote whole
after the kill into a connection whose worker it had seen go, billed but never received (the
rest of the gap: replies written before the kill, or before the endpoint saw the connection
close). Exits 1 when requests != HTTP rows, logged tokens > billed, a completed conversation
misses a turn or a judgment, or a run does not complete. "unsent": rows (all "unknown") whose
request never reached the endpoint, matched by prompt hash: journaled as sent, then killed.

The model's configuration has the provider keep its completions (`store_completions`, off
with --no-store): after each run, the rows of unknown outcome are looked up at the endpoint
(`llm.reconcile.calls_reconcile`, the reaper's own step, driven here until every one is
settled) and the table shows how many were reconciled and found "not billed", and the tokens
the endpoint answered (every reply it produced, delivered or not: what the real service
bills) against the tokens logged after reconciliation ("answered" and "gap after"). With
--no-store, reconciliation finds nothing to look up and the gap stays.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ib_kill \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python benchmarks/kill_campaign.py [--conversations 60] [--kills 3] \\
        [--latency 0.2] [--workers 2] [--kill-at 0.35]
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.kill_report import Outcome, report_print  # noqa: E402
from benchmarks.workers import (  # noqa: E402
    SETTINGS_MODULE,
    Workers,
    database_create,
    database_drop,
    journals_clear,
    queues_purge,
    workers_start,
)

# As tests/evaluations/test_run_recovery.py: claims lapse in 2 s, the reaper sweeps every
# second, so a killed worker's conversations are running again within seconds.
FAST_RECOVERY = {
    "RUN_CLAIM_LEASE_SECONDS": "2",
    "RUN_REAPER_INTERVAL_SECONDS": "1",
    "RUN_REDISPATCH_AFTER_SECONDS": "4",
    "RUN_TASK_RETRY_BACKOFF_SECONDS": "0.5",
    # Rows of unknown outcome looked up at the endpoint a second after they are restored; one
    # it has no completion for 10 s later was never answered.
    "LLM_RECONCILE_AFTER_SECONDS": "1",
    "LLM_RECONCILE_GIVE_UP_SECONDS": "10",
}
REAPER_ENTRY = "evaluations-reap-runs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--judgments", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2, help="endpoint seconds per call")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--pool", default="threads")
    parser.add_argument("--worker-concurrency", type=int, default=4, help="per process")
    parser.add_argument("--max-concurrency", type=int, default=24, help="the model's limit")
    # Small batches spread the run over every worker, so each kill takes some of it.
    parser.add_argument("--batch-size", type=int, default=4, help="ENGINE_BATCH_SIZE")
    parser.add_argument("--kills", type=int, default=3, help="runs per mode")
    parser.add_argument("--kill-at", type=float, default=0.35, help="share of baseline calls")
    parser.add_argument("--restart-after", type=float, default=1.0, help="seconds")
    parser.add_argument("--stall", type=float, default=180.0, help="seconds without progress")
    parser.add_argument("--queues", default="llm,default")
    parser.add_argument(
        "--no-store",
        action="store_true",
        help="leave the configuration's store_completions off (no reconciliation)",
    )
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not base.startswith(("postgres://", "postgresql://")) or not broker.startswith("redis://"):
        sys.exit("Set DATABASE_URL to PostgreSQL and CELERY_BROKER_URL to Redis (see --help).")
    # Read by this process's settings and inherited by every worker and beat started below.
    os.environ.update({**FAST_RECOVERY, "ENGINE_BATCH_SIZE": str(args.batch_size)})
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS_MODULE
    scratch = database_create(base)
    os.environ["DATABASE_URL"] = scratch
    import django

    django.setup()
    settings_check()
    outcomes: list[Outcome] = []
    try:
        baseline = run_one(args, scratch, base, "baseline", "none", kill_after=None)
        outcomes.append(baseline)
        threshold = max(1, round(args.kill_at * baseline.requests))
        for mode in ("one", "all"):
            for n in range(1, args.kills + 1):
                outcomes.append(run_one(args, scratch, base, f"{mode}-{n}", mode, threshold))
    finally:
        from django.db import connections

        connections.close_all()
        database_drop(base, scratch)
        if outcomes:  # what ran, even when a later run raised
            report_print(outcomes)
    sys.exit(1 if any(o.broken() for o in outcomes) else 0)


def settings_check() -> None:
    """The recovery settings exist, come from the environment, and beat's reaper entry uses
    them (beat reads the same settings module)."""
    from django.conf import settings

    for name, value in FAST_RECOVERY.items():
        if getattr(settings, name) != float(value):
            sys.exit(f"{name} is {getattr(settings, name)!r}, not {value} from the environment")
    entry = settings.CELERY_BEAT_SCHEDULE[REAPER_ENTRY]
    print(
        f"settings: {', '.join(f'{k}={v}' for k, v in FAST_RECOVERY.items())}, "
        f"ENGINE_BATCH_SIZE={settings.ENGINE_BATCH_SIZE}; beat entry {REAPER_ENTRY}: "
        f"{entry['task']} every {entry['schedule']:g} s"
    )


def beat_start(scratch: str, log: Path) -> subprocess.Popen:
    """`celery beat` in its own process (never killed): the reaper keeps sweeping while every
    worker is dead, its sweeps queued for the restarted ones."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE, "DATABASE_URL": scratch}
    with log.open("wb") as out:
        return subprocess.Popen(  # noqa: S603 - fixed argument list
            [
                *(sys.executable, "-m", "celery", "-A", "impactbench_site", "beat"),
                *("--schedule", str(log.with_suffix(".schedule")), "--loglevel", "INFO"),
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def leftovers_clear() -> None:
    """What a killed worker leaves in Redis for the next run, whose configuration and
    conversations get the same ids in the new scratch database: its concurrency permits (held
    until they expire, LLM_TIMEOUT_SECONDS + 30 s after their last renewal) and its
    unacknowledged messages (delivered again after the visibility timeout)."""
    import redis
    from django.conf import settings

    limits = redis.Redis.from_url(settings.LLM_LIMITS_REDIS_URL)
    stale = list(limits.scan_iter(f"{settings.LLM_LIMITS_KEY_PREFIX}:*"))
    if stale:
        limits.delete(*stale)
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete("unacked", "unacked_index")


def kill(workers: Workers, which: list[int]) -> None:
    for index in which:
        process = workers.processes[index]
        # The whole group: with --pool threads one process, but a prefork pool's children too.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def run_one(
    args: argparse.Namespace, scratch: str, base: str, label: str, mode: str, kill_after: int | None
) -> Outcome:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    from benchmarks.fake_endpoint import EndpointProcess
    from benchmarks.pipeline_throughput import run_prepare
    from evaluations.models import RunStatus
    from evaluations.services import runs

    connections.close_all()
    database_create(base)  # same name: dropped and made again, empty
    call_command("migrate", verbosity=0)
    journals_clear()
    queues_purge(args.queues.split(","))
    leftovers_clear()
    endpoint = EndpointProcess(args.latency).start()
    beat_log = Path(settings.VAR_DIR) / f"kill-beat-{os.getpid()}.log"
    beat_log.parent.mkdir(parents=True, exist_ok=True)
    beat = None
    pools: list[Workers] = []
    try:
        beat = beat_start(scratch, beat_log)
        pools.append(workers_start(args, args.workers, args.worker_concurrency, scratch))
        model, run = run_prepare(args, endpoint.base_url, args.max_concurrency, label)
        model.store_completions = not args.no_store
        model.save(update_fields=["store_completions"])
        endpoint.reset()
        start = time.monotonic()
        runs.run_launch(run=run)
        killed_at = None
        at_kill = 0
        seen, since = None, start
        completed = False
        while True:
            now = time.monotonic()
            requests = endpoint.stats()["requests"]
            if kill_after and killed_at is None and requests >= kill_after:
                # "one": worker 0, restarted under its own name (the same host coming back).
                killed_at, at_kill = time.monotonic(), requests
                kill(pools[0], [0] if mode == "one" else list(range(args.workers)))
            if killed_at and len(pools) == 1 and now - killed_at >= args.restart_after:
                count = 1 if mode == "one" else args.workers
                pools.append(workers_start(args, count, args.worker_concurrency, scratch))
            run.refresh_from_db(fields=["status", "conversations_completed"])
            if run.status in (RunStatus.COMPLETED, RunStatus.FAILED):
                completed = run.status == RunStatus.COMPLETED
                break
            progress = (requests, run.conversations_completed)
            if progress != seen:
                seen, since = progress, now
            elif now - since > args.stall:
                print(f"{label}: no progress for {args.stall:g} s, given up")
                break
            time.sleep(0.1)
        wall = time.monotonic() - start
        stats = endpoint.stats()
        bills, prompts = endpoint.bills()
        settled = reconcile_all(model)
    finally:
        for pool in pools:
            pool.stop()
        if beat:
            beat.terminate()
            beat.wait(timeout=30)
        endpoint.stop()
    log = beat_log.read_text(errors="replace")
    for leftover in beat_log.parent.glob(beat_log.stem + ".*"):
        leftover.unlink(missing_ok=True)
    outcome = Outcome(label, mode, wall, completed, stats["requests"], at_kill)
    outcome.billed = stats["billed_tokens"]
    outcome.resets = stats.get("resets", 0)
    # The kernel takes a reply into the socket buffer of a connection whose client is dead:
    # billed (written whole), never received. Told apart from replies written before the kill.
    dead = [tokens for at, tokens, gone in bills if killed_at and at >= killed_at and gone]
    outcome.dead_replies, outcome.dead_tokens = len(dead), sum(dead)
    # Beat's "Sending due task" lines: the reaper was scheduled, at the fast interval.
    outcome.reaps = sum(REAPER_ENTRY in line and "due task" in line for line in log.splitlines())
    accounting_read(args, outcome, run, model, prompts)
    # `logged` as without reconciliation (the reaper may have settled rows during the run
    # already: their tokens are taken out), `logged_after` with it.
    outcome.logged_after = outcome.logged
    outcome.logged -= reconciled_tokens(model)
    outcome.answered = stats["answered_tokens"]
    outcome.reconciled, outcome.not_billed = settled
    return outcome


def reconciled_tokens(model) -> int:
    from django.db.models import Sum

    from llm.models import LLMCall, ReconcileState

    rows = LLMCall.objects.filter(
        configuration=model, reconciliation__state=ReconcileState.RECONCILED
    ).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    return (rows["p"] or 0) + (rows["c"] or 0)


def reconcile_all(model) -> tuple[int, int]:
    """Settle the run's rows of unknown outcome with the endpoint's stored completions, as the
    reaper does (within the give-up age plus a few seconds); (reconciled, not billed)."""
    from django.conf import settings

    from llm.models import CallOutcome, LLMCall, ReconcileState
    from llm.reconcile import calls_reconcile

    unknown = LLMCall.objects.filter(configuration=model, outcome=CallOutcome.UNKNOWN)
    if model.store_completions:
        deadline = time.monotonic() + settings.LLM_RECONCILE_GIVE_UP_SECONDS + 15
        while time.monotonic() < deadline:
            calls_reconcile()
            pending = unknown.exclude(
                reconciliation__state__in=[ReconcileState.RECONCILED, ReconcileState.NOT_BILLED]
            )
            if not pending.exists():
                break
            time.sleep(0.5)
    return (
        unknown.filter(reconciliation__state=ReconcileState.RECONCILED).count(),
        unknown.filter(reconciliation__state=ReconcileState.NOT_BILLED).count(),
    )


def accounting_read(
    args: argparse.Namespace, outcome: Outcome, run, model, prompts: dict[str, int]
) -> None:
    """The call log, the conversations and their turns and judgments, into `outcome`."""
    from django.db.models import Count, Sum

    from evaluations.models import Conversation, Turn
    from llm.models import CallOutcome, LLMCall

    calls = LLMCall.objects.filter(configuration=model).exclude(outcome=CallOutcome.CACHED)
    outcome.rows = calls.count()
    outcome.unknown = calls.filter(outcome=CallOutcome.UNKNOWN).count()
    tokens = calls.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    outcome.logged = (tokens["p"] or 0) + (tokens["c"] or 0)
    # Replicates send the same prompts: rows and requests are matched as counts per prompt.
    per_prompt = calls.values_list("prompt_id").annotate(n=Count("id"))
    outcome.unsent = sum(max(0, n - prompts.get(pid, 0)) for pid, n in per_prompt)
    # Each prompt with rows beyond its requests, row by row: what an operator needs to see which
    # attempt was journaled as sent and never arrived.
    for pid, n in per_prompt:
        if n > prompts.get(pid, 0):
            received = prompts.get(pid, 0)
            print(
                f"{outcome.label}: prompt {pid[:12]} has {n} rows, {received} requests "
                f"({outcome.resets} connections reset by the workers' side in this run)"
            )
            for row in (
                calls.filter(prompt_id=pid)
                .order_by("created_at")
                .values_list(
                    "work_item", "claim", "purpose", "group_id", "attempt", "outcome", "created_at"
                )
            ):
                print("    " + " ".join(str(value) for value in row))
    conversations = Conversation.objects.filter(run=run)
    outcome.done = conversations.filter(status="completed").count()
    outcome.failed = conversations.filter(status="failed").count()
    indices: dict[int, list[int]] = {}
    completed = Turn.objects.filter(conversation__run=run, conversation__status="completed")
    for pk, index in completed.values_list("conversation_id", "index").order_by("index"):
        indices.setdefault(pk, []).append(index)
    wanted = list(range(1, args.turns + 1))
    shapes = conversations.filter(status="completed").annotate(
        n=Count("judgments__repetition", distinct=True)
    )
    outcome.turn_gaps = sum(indices.get(c.pk, []) != wanted for c in shapes)
    outcome.judgment_gaps = sum(c.n != args.judgments for c in shapes)


if __name__ == "__main__":
    main()
