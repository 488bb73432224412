"""Coverage of the expert-calibrated pass rate, with Monte Carlo error.

The simulation of ``tests/stats/ppi_simulation.py`` (a judge kind to one target and harsh to
the other; 160 base scenarios in two polarities with heterogeneous effects, 6 conversations
each; 300 of the 960 conversations rated by experts, stratified by polarity with unequal
inclusion probabilities), with more replications than the suite affords. Per target and
figure (calibrated PPI++, experts only, judge only): coverage of the true rate with its Monte
Carlo standard error, mean width, and bias.

Run from the repository root: ``.venv/bin/python benchmarks/ppi_coverage.py [--replications R]``;
``--scenarios-per-polarity 10 --expert-sample 60,40`` for the smallest design the pages
publish (100 verdicts over 20 base scenarios); ``--boundary`` for true rates of 0 and 1.
"bounded" is the share of calibrated figures inside [0, 1], point inside an interval of
positive width.
"""

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stats.ppi_simulation import BOUNDARY_TARGETS, TARGETS, coverage  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=4_000, help="per target")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--scenarios-per-polarity", type=int, default=80)
    parser.add_argument(
        "--expert-sample", default="180,120", help="expert verdicts per polarity, e.g. 24,16"
    )
    parser.add_argument("--boundary", action="store_true", help="true rates 0 and 1")
    args = parser.parse_args()
    r = args.replications
    design = {
        "scenarios_per_polarity": args.scenarios_per_polarity,
        "expert_sample": tuple(int(x) for x in args.expert_sample.split(",")),
    }
    print(
        f"{r:,} replications per target; {2 * args.scenarios_per_polarity} base scenarios x 6 "
        f"conversations, expert verdicts {args.expert_sample} per polarity; 95 % intervals; "
        "+- is one Monte Carlo sd"
    )
    print(
        f"{'target':16} {'figure':13} {'coverage':>17} {'mean width':>11} {'bias':>8}"
        f" {'bounded':>8}"
    )
    start = time.perf_counter()
    for i, target in enumerate(BOUNDARY_TARGETS if args.boundary else TARGETS):
        for name, row in coverage(target, r, seed=args.seed + i, **design).items():
            p = row["coverage"]
            mc = math.sqrt(p * (1 - p) / r)
            print(
                f"{target.name:16} {name:13} {100 * p:8.1f} % +- {100 * mc:.1f}"
                f" {row['width']:11.4f} {row['mean'] - row['truth']:+8.4f}"
                f" {100 * row['bounded']:7.1f}%"
            )
        print(f"{'':16} true rate {row['truth']:.4f}")
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
