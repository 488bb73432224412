"""Load a synthetic full-scale dataset (clearly marked as such) for benchmarks and load tests."""

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from tqdm import tqdm

from core.exceptions import ApplicationError
from demo.synthetic import SyntheticSpec, synthetic_dataset_generate
from results.services import results_refresh


class Command(BaseCommand):
    help = (
        "Generate a synthetic published release and a completed run (default: 809 metrics, "
        "10 models, 48,540 conversations, 145,620 judgments), blind expert verdicts and a "
        "swap study with planted truth. Synthetic data, never real results."
    )

    def add_arguments(self, parser):
        parser.add_argument("--metrics", type=int, default=809)
        parser.add_argument("--positive", type=int, default=None, help="Default: 460/809 of them.")
        parser.add_argument("--models", type=int, default=10)
        parser.add_argument("--scenarios-per-metric", type=int, default=6)
        parser.add_argument("--judgments", type=int, default=3)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--release-version", default="")
        parser.add_argument(
            "--no-refresh", action="store_true", help="Skip computing summaries and analyses."
        )
        parser.add_argument("--resamples", type=int, default=10_000)
        planted = parser.add_argument_group(
            "planted truth", "What the expert figures can be checked against (synthetic)."
        )
        planted.add_argument(
            "--judge-harshness",
            type=float,
            default=0.2,
            help="Share of true passes the judge fails for the harsh models (default 0.2).",
        )
        planted.add_argument("--harsh-models", type=int, default=1)
        planted.add_argument(
            "--calibration-per-target",
            type=int,
            default=300,
            help="Calibration sample size per model (0: no sample; every verdict in one queue).",
        )
        planted.add_argument("--swap-scenarios", type=int, default=300, help="0: no swap study.")
        planted.add_argument("--swap-flip", type=float, default=0.08)
        planted.add_argument("--swap-harshness", type=float, default=0.1)

    def handle(self, *args, **options):
        metrics = options["metrics"]
        positive = options["positive"]
        if positive is None:
            positive = round(metrics * 460 / 809)
        spec = SyntheticSpec(
            metrics=metrics,
            positive=positive,
            models=options["models"],
            scenarios_per_metric=options["scenarios_per_metric"],
            judgments=options["judgments"],
            seed=options["seed"],
            release_version=options["release_version"],
            judge_harshness=options["judge_harshness"],
            harsh_models=options["harsh_models"],
            calibration_per_target=options["calibration_per_target"],
            swap_scenarios=options["swap_scenarios"],
            swap_flip=options["swap_flip"],
            swap_harshness=options["swap_harshness"],
        )
        total = metrics * spec.scenarios_per_metric * spec.models
        bar = tqdm(total=total, unit="conv", desc="conversations", file=self.stderr._out)

        def progress(done: int, total: int, stage: str = "") -> None:
            if stage == "conversations":
                bar.update(done - bar.n)
            else:
                bar.write(f"{stage}: {done:,}")

        started = time.perf_counter()
        try:
            result = synthetic_dataset_generate(spec=spec, progress=progress)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()
        loaded = time.perf_counter() - started
        self.stdout.write(
            f"SYNTHETIC data loaded in {loaded:.1f} s: release {result.release.version}, "
            f"run {result.run.pk}, {result.metrics:,} metrics, {result.scenarios:,} scenarios, "
            f"{result.conversations:,} conversations, {result.judgments:,} judgments."
        )
        if result.calibration is not None:
            self.stdout.write(
                f"Synthetic calibration sample: {result.calibration.items.count():,} "
                "conversations rated with their true verdict."
            )
        if result.swap_study is not None:
            self.stdout.write(
                f"Synthetic swap study {result.swap_study.pk}: "
                f"{result.swap_study.sample_size} scenarios re-judged by Synthetic judge B."
            )
        if connection.vendor == "postgresql":
            # Planner statistics for the tables just filled, as autovacuum would gather them
            # soon after a bulk load: without them (autovacuum off, or not yet run) queries
            # on the data are planned for the empty tables that migrations analysed.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        if not options["no_refresh"]:
            started = time.perf_counter()
            results_refresh(run=result.run, n_resamples=options["resamples"])
            self.stdout.write(
                f"Summaries and analyses refreshed in {time.perf_counter() - started:.1f} s."
            )
