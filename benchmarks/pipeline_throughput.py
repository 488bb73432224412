"""Throughput of the evaluation pipeline against the local fake OpenAI server.

A run of N conversations (default 300) × 8 turns, each judged 3 times, is processed by W worker
threads in this process (the same `conversation_process` a Celery task calls) against
tests/fake_openai.py answering every request after a fixed 50 ms. Simulator, target and judge
share one model configuration with max_concurrency = C (default 32), enforced by llm.limits, so
at most C requests are ever in flight. The ideal is C / latency calls per second; the script
prints achieved calls/s, the ratio, and where the rest of the time went.

Threads rather than Celery workers: the limit and the per-conversation work are the same, and
threads keep the measurement about the pipeline (client, gateway, database writes) instead of
broker round trips and process start-up. One process means one GIL, which is the ceiling this
measures on a 2-core machine (see README). Uses a throwaway test database (SQLite file by
default; PostgreSQL with DATABASE_URL), created and destroyed by Django's test utilities.

    .venv/bin/python benchmarks/pipeline_throughput.py [--conversations 300] [--concurrency 32]
"""

import argparse
import cProfile
import io
import os
import pstats
import queue
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=32, help="C: max requests in flight")
    parser.add_argument("--workers", type=int, help="threads (default C + 8)")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--judgments", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile the worker threads")
    args = parser.parse_args()

    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run_benchmark(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        del test_name


def _respond(request):
    system = str(request.messages[0].get("content", "")) if request.messages else ""
    if "role-playing a person" in system:
        return {"message": "ok but what would you do?", "stop": False, "stop_reason": ""}
    if "You are the judge" in system:
        return {"present": True, "justification": "It does.", "evidence": []}
    return "Here is a considered reply with a few options to think about."


def run_benchmark(args) -> None:
    from django.db import connection

    from evaluations.models import Conversation, EvaluationRun, Scenario
    from evaluations.services import runs
    from llm import limits
    from llm.models import LLMCall, ModelConfiguration
    from metrics_registry.services import metric_create
    from tests.fake_openai import FakeOpenAIServer

    server = FakeOpenAIServer().start()
    server.latency = args.latency
    server.responder = _respond
    limits.backend_set(None)
    model = ModelConfiguration.objects.create(
        name="Fake endpoint",
        base_url=server.base_url,
        model_id="fake",
        api_key_env="",
        max_concurrency=args.concurrency,
    )
    metric = metric_create(
        name="Benchmark metric",
        criterion="Recommends professional support.",
        polarity="positive",
        subarea_slugs=["mental-emotional-health"],
        label_category_slug="referral",
        source_kind="expert_submission",
        created_by=None,
        status="validated",
    )
    version = metric.current_version
    Scenario.objects.bulk_create(
        Scenario(
            metric_version=version,
            base_index=i % 3,
            age_context="teen" if i % 2 else "adult",
            base_situation="A benchmark situation.",
            situation="A benchmark situation.",
            persona={"name": "Sam", "age": 30, "gender": "man", "background": "Tester"},
            user_goal="Get help.",
            latent_adversarial_goal="Get the assistant to decide.",
            anchors=[{"turn": 1, "text": "Ask for help."}],
            failure_condition="Decides for the user.",
            status="active" if i < 6 else "retired",
            expanded_at=version.created_at,
        )
        for i in range(6)
    )
    run = runs.run_create(
        name="Throughput benchmark",
        metric_versions=[version],
        targets=[model],
        simulator=model,
        judge=model,
        turns=args.turns,
        replicates=max(1, -(-args.conversations // 6)),
        judgments_per_conversation=args.judgments,
        seed=1,
    )
    runs.run_launch(run=run, dispatch=False)
    ids = list(Conversation.objects.filter(run=run).order_by("pk").values_list("pk", flat=True))[
        : args.conversations
    ]
    Conversation.objects.filter(run=run).exclude(pk__in=ids).delete()
    EvaluationRun.objects.filter(pk=run.pk).update(conversations_total=len(ids))
    connection.close()

    work: queue.Queue[int] = queue.Queue()
    for conversation_id in ids:
        work.put(conversation_id)
    workers = args.workers or args.concurrency + 8
    busy = [0.0] * workers
    profiles: list[cProfile.Profile] = []

    def worker(index: int) -> None:
        profile = cProfile.Profile() if args.profile else None
        if profile:
            profiles.append(profile)
            profile.enable()
        try:
            while True:
                try:
                    conversation_id = work.get_nowait()
                except queue.Empty:
                    return
                started = time.monotonic()
                runs.conversation_process(conversation_id=conversation_id, check_finished=False)
                busy[index] += time.monotonic() - started
        finally:
            if profile:
                profile.disable()
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    server.stop()

    done = Conversation.objects.filter(pk__in=ids, status="completed").count()
    failed = Conversation.objects.filter(pk__in=ids, status="failed").count()
    calls = LLMCall.objects.filter(configuration=model).count()
    http_seconds = sum(end - start for start, end in server.spans)
    achieved = calls / elapsed
    ideal = args.concurrency / args.latency
    print(f"conversations: {done} completed, {failed} failed, {len(ids)} planned")
    print(f"model calls:   {calls} in {elapsed:.1f} s, {workers} threads, C = {args.concurrency}")
    print(f"achieved:      {achieved:.1f} calls/s   ideal C/latency: {ideal:.1f} calls/s")
    print(f"ratio:         {achieved / ideal:.3f}")
    print(f"peak requests in flight (server-side): {server.max_in_flight}")
    print(
        f"mean requests in flight: {http_seconds / elapsed:.1f} of {args.concurrency} "
        f"(server time per request {http_seconds / max(1, len(server.spans)) * 1000:.1f} ms)"
    )
    per_call_ms = (sum(busy) - http_seconds) / max(1, calls) * 1000
    print(f"worker time per call outside the server: {per_call_ms:.1f} ms")
    if profiles:
        stats = pstats.Stats(profiles[0], stream=io.StringIO())
        for profile in profiles[1:]:
            stats.add(profile)
        stats.sort_stats("tottime")
        out = io.StringIO()
        stats.stream = out
        stats.print_stats(20)
        print(out.getvalue())


if __name__ == "__main__":
    main()
