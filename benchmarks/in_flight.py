"""Thousands of model calls in flight: the pipeline at 2 s latency, 2,048 at once.

`pipeline_throughput.py` with one setting, `--latency` (default 2 s) × `--in-flight` (default
2,048), in `--workers` worker processes (default 1). The model configuration's
`max_concurrency` is the number in flight, shared by the processes through the limits
backend's permits (Redis); each process's engine loop may drive its share at once
(`ENGINE_CONCURRENCY` = in flight ÷ workers), each batch task taking `ENGINE_BATCH_SIZE`
conversations and `--threads` batch tasks (default: enough for the share) running at once on
a worker's threads (each thread is one batch's database connection). Every conversation has
one model call in flight at a time, so in flight ≤ conversations under way.

Printed by `pipeline_throughput.py`: the accounting (LLMCall rows = calls at the endpoint,
exit 1 if wrong), requests in flight at the endpoint in steady state for the pipeline and for
the bare `AsyncOpenAI` baseline (`benchmarks/bare_client.py`: sharded clients, as many
processes as workers, the same calls and concurrency), calls/s of both as shares of the ideal
in flight ÷ latency, CPU per call against the bare client (target ≤ 1.0×), the workers' peak
RSS (≤ 1 GiB per process) and the calls/s the workers' measured CPU per call allows.

    DATABASE_URL=postgres://postgres@127.0.0.1/ib_x CELERY_BROKER_URL=redis://127.0.0.1:6379/9 \
        .venv/bin/python benchmarks/in_flight.py [--in-flight 2048] [--latency 2] \
        [--workers 1] [--conversations 4096] [--threads N] [--batch 128]
"""

import argparse
import math
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
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument(
        "--threads", type=int, help="batch tasks at once per worker (default: its share)"
    )
    parser.add_argument("--batch", type=int, default=128, help="ENGINE_BATCH_SIZE")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--judgments", type=int, default=1)
    args = parser.parse_args()
    share = math.ceil(args.in_flight / args.workers)
    # One batch more than share ÷ batch: the run is sent in chunks of 1,000 conversations
    # (`runs.BULK_BATCH`), each ending in a short batch, so 16 × 128 held only 2,000 at once.
    threads = args.threads or math.ceil(share / args.batch) + 1
    if threads * args.batch < share:
        sys.exit("--threads × --batch must reach the in flight of a worker (one call each).")
    # Read by the workers' settings (they inherit this environment) and by this process's.
    os.environ["ENGINE_CONCURRENCY"] = str(share)
    os.environ["ENGINE_BATCH_SIZE"] = str(args.batch)
    sys.argv = [
        str(ROOT / "benchmarks" / "pipeline_throughput.py"),
        *("--settings", f"{args.latency}:{args.in_flight}"),
        *("--conversations", str(args.conversations)),
        *("--workers", str(args.workers), "--worker-concurrency", str(threads)),
        *("--turns", str(args.turns), "--judgments", str(args.judgments)),
        *("--bare-processes", str(args.workers), "--cpu-target", "1.0"),
    ]
    from benchmarks import pipeline_throughput

    pipeline_throughput.main()


if __name__ == "__main__":
    main()
