"""Worker CPU per model call: the batch engine against a bare AsyncOpenAI loop, same process.

A fake OpenAI-compatible server (tests/fake_openai.py) runs in a subprocess with a fixed
latency, so its CPU is not counted. In this process, first the engine
(`evaluations.engine.process_conversations`) processes conversations (simulator + target per
turn, an anchor check, judgments) with C in flight, recording everything in a throwaway test
database (SQLite file by default; PostgreSQL with DATABASE_URL); then the bare client sends the
same requests (the messages and parameters of every logged call) with C in flight. Prints
calls/s and process CPU per call for both, and the ratios.

`--limit` gives the model configuration `max_concurrency` = C, so requests take permits from
the limits backend (`llm.permits`; Redis with CELERY_BROKER_URL=redis://…) as in a deployment.
`--profile PREFIX` writes cProfile statistics of the engine's two threads, the event loop
(PREFIX.loop.prof) and the database thread (PREFIX.db.prof), for `python -m pstats`.

    .venv/bin/python benchmarks/engine_profile.py [--latency 0.05] [--concurrency 32] \
        [--limit] [--profile /tmp/engine]
"""

import argparse
import asyncio
import cProfile
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.test")

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.fake_openai import FakeOpenAIServer, judge_reply
def respond(request):
    system = str(request.messages[0].get("content", "")) if request.messages else ""
    if "role-playing a person" in system:
        return {{"message": "ok but what would you do?", "stop": False, "stop_reason": ""}}
    if "<user_turns>" in str(request.messages[-1].get("content", "")):
        return {{"anchors": [{{"anchor": 1, "raised": True, "turn": 1, "quote": "ok"}}]}}
    if "You are the judge" in system:
        # A reading whose quote supports it, so the profile measures no evidence re-asks.
        return judge_reply(str(request.messages[1].get("content", "")))
    return "Here is a considered reply with a few options to think about."
server = FakeOpenAIServer().start()
server.latency = {latency}
server.responder = respond
print(server.base_url, flush=True)
time.sleep(10**6)
"""


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", SERVER.format(root=str(ROOT), latency=latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, process.stdout.readline().strip()


async def bare(base_url: str, requests: list[tuple[list, dict]], concurrency: int) -> None:
    """The engine's requests again (same messages and parameters), the client used plainly."""
    import httpx2
    import openai

    pool = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    client = openai.AsyncOpenAI(
        api_key="none",
        base_url=base_url,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpx2Client(limits=pool),
    )
    remaining = iter(requests)

    async def lane() -> None:
        for messages, parameters in remaining:
            reply = await client.chat.completions.create(
                model="fake", messages=messages, extra_body=parameters
            )
            assert reply.choices[0].message.content

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    await client.close()


def measure(fn) -> tuple[float, float]:
    wall, cpu = time.monotonic(), time.process_time()
    fn()
    return time.monotonic() - wall, time.process_time() - cpu


def profiled_engine_loop(profile: cProfile.Profile) -> asyncio.AbstractEventLoop:
    """The engine's loop, made here so its thread runs under `profile` (cProfile sees only
    the thread that enables it)."""
    from evaluations.engine import bridge

    loop = asyncio.new_event_loop()

    def serve() -> None:
        profile.enable()
        loop.run_forever()

    threading.Thread(target=serve, daemon=True, name="engine-loop").start()
    bridge._loop, bridge._loop_pid = loop, os.getpid()  # noqa: SLF001 - the module's own slot
    return loop


def engine_setup(
    base_url: str, conversations: int, turns: int, judgments: int, limit: int | None
) -> list[int]:
    from benchmarks.fixture_rows import (
        benchmark_metric_version,
        benchmark_scenario,
        endpoint_model,
    )
    from evaluations.models import Conversation, EvaluationRun, RunStatus

    model = endpoint_model(name="Fake endpoint", base_url=base_url, max_concurrency=limit)
    version = benchmark_metric_version(name="Benchmark metric")
    scenario = benchmark_scenario(version, base_index=0, age_context="adult")
    scenario.save(force_insert=True)
    run = EvaluationRun.objects.create(
        name="Engine profile",
        simulator=model,
        judge=model,
        turns=turns,
        judgments_per_conversation=judgments,
        typo_rate=0.0,
        seed=1,
        status=RunStatus.RUNNING,
        conversations_total=conversations,
    )
    run.targets.set([model])
    Conversation.objects.bulk_create(
        Conversation(run=run, scenario=scenario, target=model, replicate=i)
        for i in range(conversations)
    )
    return list(Conversation.objects.filter(run=run).values_list("pk", flat=True))


async def _disable(profile: cProfile.Profile) -> None:
    profile.disable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--conversations", type=int, help="default 4 × concurrency")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--judgments", type=int, default=3)
    parser.add_argument("--limit", action="store_true", help="max_concurrency = C (permits)")
    parser.add_argument("--profile", metavar="PREFIX", help="cProfile both engine threads")
    args = parser.parse_args()

    import logging

    import django

    django.setup()
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    process, base_url = start_server(args.latency)
    try:
        from evaluations.engine import process_conversations
        from llm.models import LLMCall

        conversations = args.conversations or 4 * args.concurrency
        ids = engine_setup(
            base_url,
            conversations,
            args.turns,
            args.judgments,
            args.concurrency if args.limit else None,
        )
        settings.ENGINE_CONCURRENCY = args.concurrency
        loop_profile, db_profile = cProfile.Profile(), cProfile.Profile()
        if args.profile:
            loop = profiled_engine_loop(loop_profile)
            db_profile.enable()
        engine_wall, engine_cpu = measure(lambda: process_conversations(ids, worker="profile"))
        if args.profile:
            db_profile.disable()
            asyncio.run_coroutine_threadsafe(_disable(loop_profile), loop).result()
            loop_profile.dump_stats(f"{args.profile}.loop.prof")
            db_profile.dump_stats(f"{args.profile}.db.prof")
        calls = LLMCall.objects.count()
        requests = [
            (call.prompt_messages, call.parameters)
            for call in LLMCall.objects.select_related("prompt").order_by("pk")
        ]
        bare_wall, bare_cpu = measure(
            lambda: asyncio.run(bare(base_url, requests, args.concurrency))
        )
    finally:
        process.kill()
        connection.creation.destroy_test_db(old_name, verbosity=0)

    vendor = connection.vendor
    print(
        f"{conversations} conversations, {calls} calls, latency {args.latency * 1000:.0f} ms, "
        f"{args.concurrency} in flight, {vendor}"
    )
    for label, wall, cpu in (
        ("bare AsyncOpenAI", bare_wall, bare_cpu),
        ("engine", engine_wall, engine_cpu),
    ):
        print(f"{label:17} {calls / wall:8.1f} calls/s  {cpu / calls * 1000:6.2f} ms CPU/call")
    print(
        f"ratio engine/bare: calls/s {bare_wall / engine_wall:.2f}×   CPU per call "
        f"{engine_cpu / bare_cpu:.2f}×   (targets ≥ 0.9×, ≤ 1.5×)"
    )


if __name__ == "__main__":
    main()
