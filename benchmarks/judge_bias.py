"""Power and false flags of "judge agrees less for this model", with Monte Carlo error.

The simulation of ``tests/stats/judge_bias_simulation.py``: metrics x models x 6 conversations
(3 base scenarios in a teen and an adult variant, heterogeneous scenarios), blind experts
giving the truth, a judge wrong at random on 2 % of conversations for every model and failing a
share of the true passes of the first ``harsh`` models. Per design: the share of harsh models
flagged (power) and of the other models flagged (false flags), each with its Monte Carlo
standard error; "any other flagged" is the share of releases in which any model the judge
treats fairly is flagged; "harsh < 0" counts harsh models whose interval lies below zero
without the badge's floor of 30 blind verdicts.

Designs: the synthetic release (120 metrics x 6 models, every conversation rated, 3 harsh
models), the same with no harsh model (the false-flag rate when the judge treats all alike),
ten models with one harsh, and 12 blind verdicts per model (the smallest calibration sample).

Run from the repository root: ``.venv/bin/python benchmarks/judge_bias.py [--replications R]``.

``--release N`` instead reads the newest official synthetic run of the database in
``DATABASE_URL`` (``manage.py generate_synthetic_dataset --harsh-models N ...``) and prints each
model's judge trust and its comparison with the other models, the first N marked as planted
harsh, and the metric x model cells' interval widths.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stats.judge_bias_simulation import Design, flag_rates  # noqa: E402

DESIGNS = {
    "synthetic release: 120 metrics x 6 models, 3 harsh": Design(),
    "same, no harsh model": Design(harsh_models=0),
    "120 metrics x 10 models, 1 harsh": Design(models=10, harsh_models=1),
    "120 metrics x 10 models, no harsh model": Design(models=10, harsh_models=0),
    "harshness 0.1, 3 of 6 harsh": Design(harshness=0.1),
    "12 blind verdicts per model, 3 of 6 harsh": Design(rated_per_model=12),
    "12 blind verdicts per model, no harsh model": Design(rated_per_model=12, harsh_models=0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=400)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--release", type=int, metavar="HARSH_MODELS", default=None)
    args = parser.parse_args()
    if args.release is not None:
        synthetic_release(args.release)
        return
    print(f"{args.replications:,} replications per design; harshness 0.2 unless stated")
    columns = ("harsh flagged", "others flagged", "any other flagged", "harsh < 0")
    print(f"{'design':52s} " + " ".join(f"{c:>17s}" for c in columns))
    for name, design in DESIGNS.items():
        start = time.process_time()
        r = flag_rates(design, args.replications, args.seed)

        def cell(key: str, rates: dict = r) -> str:
            if rates[key] != rates[key]:  # nan: no such model in this design
                return f"{'-':>17s}"
            return f"{rates[key]:7.3f} ± {rates[key + ' se']:.3f}".rjust(17)

        print(
            f"{name:52s} {cell('harsh flagged')} {cell('fair flagged')} "
            f"{cell('any fair flagged')} {cell('harsh below zero')}"
            f"   ({time.process_time() - start:.1f} s)"
        )


def synthetic_release(harsh_models: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")
    import django

    django.setup()
    from evaluations.models import EvaluationRun
    from results.services.judge_trust import run_agreement_gaps, run_judge_trust

    run = EvaluationRun.objects.filter(synthetic=True, is_official=True).order_by("-pk").first()
    if run is None:
        raise SystemExit("No official synthetic run: run manage.py generate_synthetic_dataset.")
    trust = run_judge_trust(run)
    cells = list(trust["metric_target"].values())
    agreement = [c.agreement for c in cells if c.agreement.defined]
    kappa = [c.kappa for c in cells if c.kappa.defined]
    print(f"run {run.pk} ({run.name}): {len(cells)} metric x model cells")
    for name, figures in (("agreement", agreement), ("kappa", kappa)):
        widths = [e.width for e in figures]
        print(
            f"  {name}: {len(figures)} defined, {sum(w == 0 for w in widths)} of zero width, "
            f"narrowest {min(widths):.3f}"
        )
    gaps = run_agreement_gaps(run)

    def shown(e) -> str:
        return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}] n={e.n}"

    flagged = {"harsh": 0, "other": 0}
    for index, target in enumerate(run.targets.order_by("pk")):
        side = "harsh" if index < harsh_models else "other"
        cell, gap = trust["target"][target.pk], gaps[target.pk]
        flagged[side] += gap.agrees_less
        d = gap.difference
        print(
            f"  {target.name} ({side}): {cell.badge}, agreement {shown(cell.agreement)}, "
            f"kappa {shown(cell.kappa)}; others {shown(gap.others)}; difference "
            f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}] at {d.confidence:.1%}: {gap.label}"
        )
    others = len(gaps) - min(harsh_models, len(gaps))
    print(
        f"judge agrees less: {flagged['harsh']} of {min(harsh_models, len(gaps))} harsh models, "
        f"{flagged['other']} of {others} others"
    )


if __name__ == "__main__":
    main()
