"""Time judge trust for every metric x model cell of a release, batched against cell by cell.

A full release's refresh computes blind expert agreement with the judge and Cohen's kappa, each
with its cluster-bootstrap interval, for 809 metrics x 10 models = 8,090 cells of 6 rated
conversations (3 base scenarios: each situation's teen and adult variants). The baseline is
what the refresh did before: ``stats.judge_trust`` called cell by cell. ``stats.judge_trust_by``
now shares one drawing among the cells with the same number of clusters and resamples them in
batches (kappa's bootstrap; the agreement's Wilson intervals are one vectorised call); it must
give every cell exactly the baseline's figures (checked here on the data).

Run from the repository root: ``.venv/bin/python benchmarks/judge_trust.py``
(``--metrics 100 --models 4`` for a quick look).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stats import judge_trust, judge_trust_by  # noqa: E402
from stats.figures import DEFAULT_RESAMPLES  # noqa: E402
from stats.judge_trust_intervals import agreement_icc  # noqa: E402

BASES, VARIANTS = 3, 2


def release_ratings(metrics: int, models: int, seed: int = 7):
    """One blind verdict per conversation; the judge right 85 % of the time."""
    rng = np.random.default_rng(seed)
    metric = np.repeat(np.arange(metrics), models * BASES * VARIANTS)
    model = np.tile(np.repeat(np.arange(models), BASES * VARIANTS), metrics)
    base = np.tile(np.repeat(np.arange(BASES), VARIANTS), metrics * models)
    expert = (rng.random(metric.size) < 0.6).astype(float)
    judge = np.where(rng.random(metric.size) < 0.85, expert, 1.0 - expert)
    cells = [f"{m}:{t}" for m, t in zip(metric.tolist(), model.tolist(), strict=True)]
    return cells, judge, expert, metric * BASES + base


def cell_by_cell(cells, judge, expert, clusters, n_resamples, icc):
    rows: dict[str, list[int]] = {}
    for i, cell in enumerate(cells):
        rows.setdefault(cell, []).append(i)
    out = {}
    for cell, mine in rows.items():
        index = np.asarray(mine)
        out[cell] = judge_trust(
            judge[index], expert[index], clusters[index], icc=icc, n_resamples=n_resamples
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=int, default=809)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = release_ratings(args.metrics, args.models)
    # The release's intra-cluster correlation, pooled over every cell once, as the refresh
    # does: each cell's design effect shrinks its own towards it.
    icc = agreement_icc(*data)
    print(
        f"{args.metrics * args.models:,} cells, {len(data[0]):,} blind verdicts, "
        f"{args.resamples:,} resamples a cell; CPU seconds, best of {args.repeats}, alternating"
    )
    best = {"cell by cell (baseline)": float("inf"), "batched (judge_trust_by)": float("inf")}
    results = {}
    for _ in range(args.repeats):
        for name, run in (
            ("cell by cell (baseline)", lambda: cell_by_cell(*data, args.resamples, icc)),
            (
                "batched (judge_trust_by)",
                lambda: judge_trust_by(*data, icc=icc, n_resamples=args.resamples),
            ),
        ):
            start = time.process_time()
            results[name] = run()
            best[name] = min(best[name], time.process_time() - start)
    baseline, batched = best.values()
    for name, seconds in best.items():
        print(f"  {name:26s} {seconds:7.2f} s")
    same = results["cell by cell (baseline)"] == results["batched (judge_trust_by)"]
    print(f"  batched / baseline: {batched / baseline:.2f} x")
    print(f"  every cell's figures identical to the baseline's: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
