"""Coverage of every published estimate type at the platform's two designs, with its Monte
Carlo error: the simulation of ``tests/results/coverage_design.py`` (the suite runs it with
few replications) with many, the per-metric rates of metrics whose base scenarios differ
widely, the teen-versus-adult discoveries under a true null, and -- section "extremes" -- each
bounded constructor at true values 0, 1 and between with 1-3, 20 and the demo's clusters
(``tests/stats/extremes_simulation.py``), with the share of zero-width intervals. Three more
sections run the simulations of the figures with a benchmark of their own, with fewer
replications: "teen-adult" (the paired gap test's level, FDR and power:
``benchmarks/teen_adult.py``), "calibrated" (expert-calibrated rates at the smallest published
design and the default one, and at true rates 0 and 1: ``benchmarks/ppi_coverage.py``) and
"judge-bias" (the badge "judge agrees less for this model": ``benchmarks/judge_bias.py``).

Designs: the demo's 64 metrics (3-9 base-scenario clusters per subarea x polarity, 3 models)
and a full 809-metric release (10 models); base-scenario effects with a per-metric SD uniform
up to ``--sd-max`` on the logit scale, a judge that flips a verdict with probability
``--judge-noise``. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/coverage.py [--demo-replications 150]
        [--full-replications 10] [--extremes-replications 400] [--sections ...]
        [--teen-replications 40,10] [--calibrated-replications 500] [--bias-replications 200]
"""

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

if __name__ == "coverage":
    # Another benchmark runs from this directory, which Python puts first on its path, and a
    # library (numba) imports the coverage package: hand it the package, not this script.
    import importlib

    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    del sys.modules["coverage"]
    sys.modules["coverage"] = importlib.import_module("coverage")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sim: Any = None  # tests.results.coverage_design, once set up
extremes: Any = None  # tests.stats.extremes_simulation
SECTIONS = ("designs", "spread", "extremes", "teen-adult", "calibrated", "judge-bias")


def _setup() -> None:
    """Django and the simulations, only when run: imported under the name ``coverage`` (see
    above) this module must do nothing."""
    global sim, extremes
    # This file's own directory comes first on the path when it runs as a script, where its
    # name would stand in for the ``coverage`` package that numba imports.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.test")
    import django

    django.setup()
    from tests.results import coverage_design
    from tests.stats import extremes_simulation

    sim, extremes = coverage_design, extremes_simulation


def main() -> None:
    _setup()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--demo-replications", type=int, default=150)
    parser.add_argument("--full-replications", type=int, default=10)
    parser.add_argument("--extremes-replications", type=int, default=400)
    parser.add_argument(
        "--sections",
        nargs="+",
        default=list(SECTIONS),
        choices=SECTIONS,
    )
    parser.add_argument("--teen-replications", default="40,10", help="demo,full releases")
    parser.add_argument("--calibrated-replications", type=int, default=500, help="per target")
    parser.add_argument("--bias-replications", type=int, default=200)
    parser.add_argument("--sd-max", type=float, nargs="+", default=[0.5, 2.0])
    parser.add_argument("--judge-noise", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    designs = [
        (sim.demo_design(), args.demo_replications),
        (sim.full_design(np.random.default_rng(809)), args.full_replications),
    ]
    if "designs" in args.sections:
        designs_section(args, designs)
    if "spread" in args.sections:
        spread_section(args, designs)
    if "extremes" in args.sections:
        extremes_section(args)
    if "teen-adult" in args.sections:
        teen_adult_section(args)
    if "calibrated" in args.sections:
        calibrated_section(args)
    if "judge-bias" in args.sections:
        judge_bias_section(args)


def designs_section(args: argparse.Namespace, designs: list) -> None:
    print("coverage of nominal 95 % intervals (± Monte Carlo standard error; n intervals)")
    for sd_max in args.sd_max:
        for design, replications in designs:
            started = time.perf_counter()
            figures = sim.coverage(
                design,
                replications=replications,
                sd_max=sd_max,
                judge_noise=args.judge_noise,
                seed=args.seed,
            )
            took = time.perf_counter() - started
            print(
                f"\n{design.name}, between-base SD up to {sd_max:g}, judge noise "
                f"{args.judge_noise:g}, {replications} releases ({took:.0f} s)"
            )
            for name, (covered, mc_error, count) in figures.items():
                print(f"  {name:<40} {covered * 100:5.1f} % ± {mc_error * 100:.2f}  (n = {count})")
    print("\nmodels 4-9 points apart: share told apart (paired simultaneous vs. non-overlap)")
    for design, replications in designs:
        power = sim.separation(
            design,
            replications=max(2, replications // 2),
            sd_max=max(args.sd_max),
            judge_noise=args.judge_noise,
            seed=args.seed,
        )
        print(
            f"  {design.name}: paired {power['paired'] * 100:.1f} %, own intervals not "
            f"overlapping {power['overlap'] * 100:.1f} % ({power['pairs']} pairs)"
        )
    print("\nteen vs adult, no true difference, gaps varying between base scenarios (SD up to 2)")
    for design, replications in designs:
        null = sim.teen_adult_null(
            design,
            replications=replications * 2,
            gap_sd_max=2.0,
            judge_noise=args.judge_noise,
            seed=args.seed,
        )
        releases, wide = null["releases"], null["n wide"]
        fdr_error = np.sqrt(0.05 * 0.95 / releases) * 100
        print(
            f"  {design.name}: per-metric null rejection {null['null rejection'] * 100:.1f} %, "
            f"gap SD > 1.5: {null['null rejection, gap SD > 1.5'] * 100:.1f} % "
            f"(± {np.sqrt(0.05 * 0.95 / wide) * 100:.1f}, {wide} metrics); any BH discovery "
            f"(FDR) {null['any discovery'] * 100:.1f} % ± {fdr_error:.1f}"
            f" ({releases} releases)"
        )


def spread_section(args: argparse.Namespace, designs: list) -> None:
    print("\nmetric rates of metrics whose between-base SD is at least 1.8 (SD up to 2.0)")
    for design, replications in designs:
        figures = sim.metric_coverage_by_spread(
            design,
            replications=replications * 2,
            sd_max=2.0,
            judge_noise=args.judge_noise,
            seed=args.seed,
            wide=1.8,
        )
        for name, (covered, mc_error, count) in figures.items():
            print(
                f"  {design.name}, {name:<24} {covered * 100:5.1f} % ± {mc_error * 100:.2f}"
                f"  (n = {count})"
            )


def extremes_section(args: argparse.Namespace) -> None:
    print(
        f"\nextremes: coverage of nominal 95 % (± Monte Carlo error), share of zero-width "
        f"intervals, {args.extremes_replications} data sets each"
    )
    print(f"  {'constructor':<26} {'truth':>7} {'clusters':>8}  coverage          zero width")
    started = time.perf_counter()
    worst = 1.0
    for case in extremes.cases():
        r = extremes.run(case, args.extremes_replications, args.seed)
        worst = min(worst, r["coverage"])
        note = f"  no interval {r['no_interval'] * 100:.0f} %" if r["no_interval"] else ""
        print(
            f"  {case.constructor:<26} {case.truth:+7.3f} {case.clusters:>8}  "
            f"{r['coverage'] * 100:5.1f} % ± {r['mc_error'] * 100:4.1f}   "
            f"{r['zero_width'] * 100:5.1f} %{note}"
        )
    print(f"  lowest coverage {worst * 100:.1f} % ({time.perf_counter() - started:.0f} s)")


def teen_adult_section(args: argparse.Namespace) -> None:
    demo, full = (int(r) for r in args.teen_replications.split(","))
    print(f"\nteen-adult test ({demo} demo and {full} full releases; benchmarks/teen_adult.py)")
    lines = sim.teen_adult_report(
        demo_replications=demo,
        full_replications=full,
        gap_sd_max=2.0,
        judge_noise=args.judge_noise,
        share=0.3,
        seed=args.seed,
    )
    print("\n".join(f"  {line}" for line in lines))


def calibrated_section(args: argparse.Namespace) -> None:
    from tests.stats import ppi_simulation as ppi

    r = args.calibrated_replications
    print(f"\ncalibrated rates, {r} replications per target (benchmarks/ppi_coverage.py)")
    designs = {
        "160 base scenarios, 300 verdicts": {},
        "20 base scenarios, 100 verdicts": {
            "scenarios_per_polarity": 10,
            "expert_sample": (60, 40),
        },
    }
    for name, design in designs.items():
        for targets in (ppi.TARGETS, ppi.BOUNDARY_TARGETS):
            for i, target in enumerate(targets):
                row = ppi.coverage(target, r, seed=args.seed + i, **design)["calibrated"]
                p = row["coverage"]
                print(
                    f"  {name:<34} {target.name:<16} true {row['truth']:.3f}  "
                    f"{p * 100:5.1f} % ± {100 * np.sqrt(p * (1 - p) / r):.1f}  "
                    f"inside [0, 1] with width {row['bounded'] * 100:5.1f} %"
                )


def judge_bias_section(args: argparse.Namespace) -> None:
    from tests.stats.judge_bias_simulation import Design, flag_rates

    r = args.bias_replications
    print(f"\njudge agrees less for this model, {r} releases each (benchmarks/judge_bias.py)")
    designs = {
        "120 metrics x 6 models, 3 harsh (0.2)": Design(),
        "120 metrics x 6 models, none harsh": Design(harsh_models=0),
        "120 metrics x 10 models, none harsh": Design(models=10, harsh_models=0),
    }
    for name, design in designs.items():
        rates = flag_rates(design, r, args.seed)
        harsh = rates["harsh flagged"]
        shown = "-" if harsh != harsh else f"{harsh * 100:5.1f} %"
        print(
            f"  {name:<40} harsh flagged {shown}; any fair model flagged "
            f"{rates['any fair flagged'] * 100:4.1f} % ± {rates['any fair flagged se'] * 100:.1f}"
        )


if __name__ == "__main__":
    main()
