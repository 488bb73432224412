"""The teen-versus-adult test at the demo's and the full release's design: per-metric rejection
of a true null and the chance of any Benjamini-Hochberg discovery under the complete null,
power per metric for true gaps of 10 and 15 points in a share of the metrics and the share
Benjamini-Hochberg finds, each with its Monte Carlo error (``teen_adult_report`` in
``tests/results/coverage_design.py``). Prints figures; asserts nothing.

    .venv/bin/python benchmarks/teen_adult.py [--demo-replications 400] [--full-replications 100]
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.test")

import django  # noqa: E402

django.setup()

from tests.results.coverage_design import teen_adult_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-replications", type=int, default=400)
    parser.add_argument("--full-replications", type=int, default=100)
    parser.add_argument("--gap-sd-max", type=float, default=2.0)
    parser.add_argument("--judge-noise", type=float, default=0.05)
    parser.add_argument("--share", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    lines = teen_adult_report(
        demo_replications=args.demo_replications,
        full_replications=args.full_replications,
        gap_sd_max=args.gap_sd_max,
        judge_noise=args.judge_noise,
        share=args.share,
        seed=args.seed,
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
