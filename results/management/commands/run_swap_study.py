"""Re-run a random sample of a run's scenarios with another judge and/or user simulator.

manage.py run_swap_study --run 12 --judge "Offline judge: strict" --sample 40 --seed 1 --inline
manage.py run_swap_study --run 12 --simulator "Other simulator" --sample 40 --yes   # on workers

The re-run is an ordinary run (its plan, progress bar and summary are run_evaluation's); when
it finishes, the study's figures join the base run's analysis (methodology page, API). The
command is the results app's: it draws the study (evaluations) and prints its figures (here).
"""

from django.core.management.base import CommandError

from core.exceptions import ApplicationError
from evaluations.management.commands.run_evaluation import Command as RunEvaluationCommand
from evaluations.models import EvaluationRun, RunStatus
from evaluations.services import runs
from evaluations.services.swap import swap_study_create
from llm.models import ModelConfiguration

from ...services.freshness import swap_study_figures_refreshed
from ...services.swap_study import swap_verdict_text

DEFAULT_SAMPLE = 50


def _configuration(name: str | None) -> ModelConfiguration | None:
    if not name:
        return None
    configuration = ModelConfiguration.objects.filter(name=name).first()
    if configuration is None:
        raise CommandError(f'No model configuration is named "{name}".')
    return configuration


class Command(RunEvaluationCommand):
    help = "Swap study: re-run a sample of a run's scenarios with another judge or simulator."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True, help="The (official) base run.")
        parser.add_argument("--judge", help="Alternative judge configuration name.")
        parser.add_argument("--simulator", help="Alternative user simulator configuration name.")
        parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help="Scenarios drawn.")
        parser.add_argument("--seed", type=int, help="Seed of the draw (recorded; default random).")
        parser.add_argument("--yes", action="store_true", help="Launch without asking.")
        parser.add_argument(
            "--inline", action="store_true", help="Process here instead of on Celery workers."
        )

    def handle(self, *args, **options) -> None:
        base = EvaluationRun.objects.filter(pk=options["run"]).first()
        if base is None:
            raise CommandError(f"There is no run {options['run']}.")
        if not base.is_official:
            self.stdout.write(
                self.style.WARNING(
                    f"Run {base.pk} is not official: its study's figures stay off public pages."
                )
            )
        try:
            study = swap_study_create(
                base_run=base,
                judge=_configuration(options["judge"]),
                simulator=_configuration(options["simulator"]),
                sample_size=options["sample"],
                seed=options["seed"],
            )
            run = study.swap_run
            self.stdout.write(
                f"Swap study {study.pk}: {study.get_swapped_display().lower()} swapped; "
                f"{study.sample_size} scenarios drawn with seed {study.seed}"
                + (" (the base run's conversations are re-judged)" if study.rejudged else "")
            )
            self._show_plan(run)
            if not options["yes"] and not self._confirm():
                self.stdout.write(f"Not launched. Launch later: run_evaluation --run {run.pk}.")
                return
            run = runs.run_launch(run=run, dispatch=not options["inline"])
            if options["inline"]:
                self._process_inline(run)
            else:
                self._follow(run)
        except ApplicationError as error:
            raise CommandError(error.message) from error
        run.refresh_from_db()
        if run.status == RunStatus.COMPLETED:
            self._figures(study.base_run, study.pk)

    def _figures(self, base: EvaluationRun, study_id: int) -> None:
        for study in swap_study_figures_refreshed(run_id=base.pk):
            if study["study"] == study_id:
                self._print_study(study)

    def _print_study(self, study: dict) -> None:
        self.stdout.write(f"Study {study['study']} (run {study['swap_run']}):")
        for polarity, block in study["polarities"].items():
            tau = block["rank_agreement"]
            flips = block["flip_share"]
            single = block["single_vs_majority"]
            self.stdout.write(
                f"  {polarity}: Kendall's tau {_fmt(tau)}; verdicts flipped {_fmt(flips)}; "
                f"single vs majority rho {_fmt(single['base'])} → {_fmt(single['swap'])}"
            )
            for line in block["models"]:
                self.stdout.write(
                    f"    {line['model']}: shift {_fmt(line['shift'])}, "
                    f"grade {line['base_grade']} → {line['swap_grade']} "
                    f"({swap_verdict_text(line)})"
                )


def _fmt(estimate: dict) -> str:
    """Value [interval] (n) in the estimate's unit: %, percentage points or a coefficient."""
    scale, unit = {"proportion": (100, " %"), "difference": (100, " pp")}.get(
        estimate.get("unit"), (1, "")
    )
    if estimate["value"] is None:
        return f"— ({estimate.get('reason') or 'not enough data'}, n={estimate['n']})"
    digits = 1 if scale == 100 else 2
    text = f"{estimate['value'] * scale:.{digits}f}{unit}"
    if estimate["low"] is not None:
        text += f" [{estimate['low'] * scale:.{digits}f}, {estimate['high'] * scale:.{digits}f}]"
    return f"{text} (n={estimate['n']})"
