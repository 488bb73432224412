"""Thousands of model calls in flight in one worker: the pipeline at 2 s latency, 2,048 at once.

`pipeline_throughput.py` with one setting, `--latency` (default 2 s) × `--in-flight` (default
2,048), in ONE worker process: its engine loop may drive that many conversations at once
(`ENGINE_CONCURRENCY` and the model configuration's `max_concurrency` set to the number in
flight), each batch task taking `ENGINE_BATCH_SIZE` conversations and `--threads` batch tasks
running at once on the worker's threads (each thread is one batch's database connection).
Every conversation has one model call in flight at a time, so in flight ≤ conversations under
way. Printed by `pipeline_throughput.py`: the accounting (LLMCall rows = calls at the endpoint,
exit 1 if wrong), requests in flight at the endpoint in steady state, calls/s of the pipeline
and of the bare `AsyncOpenAI` client with the same concurrency, each as a share of the ideal
in flight ÷ latency, CPU per call against the bare client, and the worker's peak RSS.

    DATABASE_URL=postgres://postgres@127.0.0.1/ib_x CELERY_BROKER_URL=redis://127.0.0.1:6379/9 \
        .venv/bin/python benchmarks/in_flight.py [--in-flight 2048] [--latency 2] \
        [--conversations 4096] [--threads 16] [--batch 128]
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--in-flight", type=int, default=2048)
    parser.add_argument("--latency", type=float, default=2.0, help="endpoint seconds per call")
    parser.add_argument("--conversations", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=16, help="batch tasks at once")
    parser.add_argument("--batch", type=int, default=128, help="ENGINE_BATCH_SIZE")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--judgments", type=int, default=1)
    args = parser.parse_args()
    if args.threads * args.batch < args.in_flight:
        sys.exit("--threads × --batch must reach --in-flight (one call per conversation).")
    # Read by the worker's settings (it inherits this environment) and by this process's.
    os.environ["ENGINE_CONCURRENCY"] = str(args.in_flight)
    os.environ["ENGINE_BATCH_SIZE"] = str(args.batch)
    sys.argv = [
        str(ROOT / "benchmarks" / "pipeline_throughput.py"),
        *("--settings", f"{args.latency}:{args.in_flight}"),
        *("--conversations", str(args.conversations)),
        *("--workers", "1", "--worker-concurrency", str(args.threads)),
        *("--turns", str(args.turns), "--judgments", str(args.judgments)),
    ]
    from benchmarks import pipeline_throughput

    pipeline_throughput.main()


if __name__ == "__main__":
    main()
