"""Public pages and API under gunicorn with concurrent clients on loopback.

Starts gunicorn with the production config file (`impactbench_site/gunicorn.conf.py`) on the
database of DATABASE_URL (fill it first, e.g. `manage.py generate_synthetic_dataset` for the
full-scale release, or `manage.py seed_demo`), then:

1. one client fetches every path `--baseline` times: the single-client median per path;
2. `--clients` concurrent clients (one asyncio loop, one pooled httpx client) fetch the paths
   round-robin until `--requests` requests or `--seconds` have passed, whichever first.

Prints requests/s, p50/p95/p99 latency and errors per path, and p95 as a ratio to that path's
single-client median (target: 0 errors, every ratio ≤ 10).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/impactbench \
        .venv/bin/python benchmarks/load.py [--clients 32] [--requests 3000] [--seconds 60]
"""

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PATHS = (
    "/",
    "/registry/taxonomy/",
    "/registry/metrics/",
    "/registry/releases/",
    "/results/methodology/",
    "/api/metrics/",
    "/api/releases/",
    "/health/",
)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_gunicorn(port: int, workers: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.local",
        "DJANGO_DEBUG": "false",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(workers),
    }
    gunicorn = Path(sys.executable).parent / "gunicorn"
    return subprocess.Popen(  # noqa: S603 - fixed argument list
        [str(gunicorn), "--config", "impactbench_site/gunicorn.conf.py", "impactbench_site.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


async def fetch(client: httpx.AsyncClient, path: str) -> tuple[float, bool]:
    started = time.perf_counter()
    try:
        response = await client.get(path)
        ok = response.status_code == 200
    except httpx.HTTPError:
        ok = False
    return time.perf_counter() - started, ok


async def measure(base: str, args) -> None:
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if (await client.get("/health/")).status_code == 200:
                    break
            except httpx.HTTPError:
                await asyncio.sleep(0.3)
        baseline = {}
        for path in PATHS:
            timings = [(await fetch(client, path))[0] for _ in range(args.baseline)]
            baseline[path] = statistics.median(timings)

        results: dict[str, list[float]] = {path: [] for path in PATHS}
        errors = {path: 0 for path in PATHS}
        counter = iter(range(args.requests))
        stop_at = time.monotonic() + args.seconds

        async def one_client(offset: int) -> None:
            for number in counter:
                if time.monotonic() > stop_at:
                    return
                path = PATHS[(number + offset) % len(PATHS)]
                seconds, ok = await fetch(client, path)
                results[path].append(seconds)
                errors[path] += not ok

        started = time.perf_counter()
        await asyncio.gather(*(one_client(i) for i in range(args.clients)))
        elapsed = time.perf_counter() - started

    total = sum(len(v) for v in results.values())
    print(
        f"{total} requests by {args.clients} clients in {elapsed:.1f} s: "
        f"{total / elapsed:.1f} requests/s, {sum(errors.values())} errors"
    )
    print(
        f"{'path':<26}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'1-client':>10}"
        f"{'p95/1':>8}{'errors':>8}"
    )
    worst = 0.0
    for path in PATHS:
        timings = results[path]
        if not timings:
            continue
        ratio = percentile(timings, 0.95) / baseline[path]
        worst = max(worst, ratio)
        print(
            f"{path:<26}{len(timings):>6}{percentile(timings, 0.5) * 1000:>9.1f}"
            f"{percentile(timings, 0.95) * 1000:>9.1f}{percentile(timings, 0.99) * 1000:>9.1f}"
            f"{baseline[path] * 1000:>10.1f}{ratio:>8.1f}{errors[path]:>8}"
        )
    print(f"worst p95 / single-client median: {worst:.1f} (target ≤ 10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--baseline", type=int, default=15, help="single-client requests/path")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    args = parser.parse_args()
    port = free_port()
    server = start_gunicorn(port, args.workers)
    try:
        asyncio.run(measure(f"http://127.0.0.1:{port}", args))
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
