"""Seed the complete demo from an empty database and time every step.

What `make demo` does before and behind its first page: migrate (the taxonomy, label
categories and role groups load inside migrations), the demo accounts, then every step of
`demo.seeding.demo_seed_steps()` (configurations, metrics, release, rubric items, scenarios,
anchor study, the 1,152-conversation offline run, summaries, rating queues). It runs on the
embedded defaults (SQLite, filesystem broker) in a scratch var folder, debug off, as the demo's
background seed does. Target: the complete seed in ≤ 60 s on an idle 2-core machine.

The baseline, for the ratio convention, is a fixed pure-Python CPU loop timed in this process
before and after the seed (the faster of the two): total ÷ baseline moves with the code, not
with the machine's load. `--profile FILE` writes a cProfile of the seed (not the baseline).

Run from the repository root: ``.venv/bin/python benchmarks/demo_seed.py [--profile out.prof]``.
"""

import argparse
import cProfile
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Import from the repository root, not this folder: a script named like a package would
# shadow it for every library that probes for it (numba looks for `coverage`).
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]


def cpu_loop() -> float:
    """A fixed amount of interpreter work (~0.3 s on the 2-core machine when idle)."""
    start = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i * i % 7
    assert total > 0
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="write a cProfile of the seed to this file")
    parser.add_argument("--keep", action="store_true", help="keep the scratch var folder")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="impactbench-demo-seed-"))
    os.environ["IMPACTBENCH_VAR_DIR"] = str(var_dir)
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"):
        os.environ.pop(name, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "impactbench_site.settings.local"
    os.environ["DJANGO_DEBUG"] = "false"  # as the demo's seed process runs

    import django

    django.setup()
    from django.core.management import call_command

    from core.demo import demo_accounts_seed
    from demo.progress import SeedTracker
    from demo.seeding import demo_seed_steps

    baseline = cpu_loop()
    profile = cProfile.Profile() if args.profile else None
    timings: list[tuple[str, float]] = []

    def timed(name: str, func) -> None:
        start = time.perf_counter()
        if profile:
            profile.enable()
        func()
        if profile:
            profile.disable()
        timings.append((name, time.perf_counter() - start))
        print(f"  {name:<16} {timings[-1][1]:7.2f} s", flush=True)

    print(f"scratch var folder {var_dir}; steps as they finish:")
    timed("migrate", lambda: call_command("migrate", interactive=False, verbosity=0))
    timed("cache table", lambda: call_command("createcachetable", verbosity=0))
    timed("accounts", demo_accounts_seed)
    steps = demo_seed_steps()
    tracker = SeedTracker(steps=len(steps), record=True)  # the file writes count too
    for index, step in enumerate(steps, start=1):
        tracker.step(index, key=step.key, label=step.label, unit=step.unit)
        timed(
            step.key,
            (lambda s=step: s.func(progress=tracker.count)) if step.counts else step.func,
        )
    tracker.finish()
    baseline = min(baseline, cpu_loop())

    total = sum(seconds for _, seconds in timings)
    print(f"\nbaseline (fixed CPU loop, best of 2): {baseline:.3f} s")
    print(f"{'step':<16} {'seconds':>8} {'share':>7} {'÷ baseline':>11}")
    for name, seconds in timings:
        print(f"{name:<16} {seconds:8.2f} {seconds / total:7.1%} {seconds / baseline:11.1f}")
    print(f"{'total':<16} {total:8.2f} {1:7.1%} {total / baseline:11.1f}")
    print(f"target: total ≤ 60 s on an idle 2-core machine; measured {total:.1f} s")
    if profile:
        profile.dump_stats(args.profile)
        print(f"profile written to {args.profile}")
    if args.keep:
        print(f"kept {var_dir}")
    else:
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
