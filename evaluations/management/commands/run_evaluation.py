"""Start, resume or watch an evaluation run from the terminal, with a progress bar.

manage.py run_evaluation --release 1.0.0 --targets "Model A,Model B" --yes
manage.py run_evaluation --metrics IB-0001,IB-0002 --targets "Model A" --inline
manage.py run_evaluation --run 12            # resume
manage.py run_evaluation --run 12 --watch    # follow a run workers are processing
manage.py run_evaluation --retry-failed 12   # queue failed conversations and rubric replies again
"""

import time
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _
from tqdm import tqdm

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun, RunStatus
from evaluations.selectors import run_progress
from evaluations.services import runs
from evaluations.services.estimate_format import duration, estimate_table
from evaluations.services.estimates import run_estimate
from evaluations.services.run_setup import run_create_from_names

POLL_SECONDS = 1.0


class Command(BaseCommand):
    help = "Create and launch an evaluation run (or resume / watch one) with a progress bar."

    def add_arguments(self, parser) -> None:
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--release", help="Release version, e.g. 1.0.0.")
        what.add_argument("--metrics", help="Comma-separated metric keys (current versions).")
        what.add_argument("--run", type=int, help="Resume (or with --watch, follow) this run.")
        what.add_argument(
            "--retry-failed",
            type=int,
            metavar="RUN",
            help="Retry this run's failed conversations and rubric replies.",
        )
        parser.add_argument("--rubric-items", default="", help="Comma-separated rubric keys.")
        parser.add_argument("--targets", default="", help="Comma-separated configuration names.")
        parser.add_argument("--simulator", help="Configuration name (default: role default).")
        parser.add_argument("--judge", help="Configuration name (default: role default).")
        parser.add_argument(
            "--fidelity-checker",
            help="Configuration that checks the simulated users (default: the role's default, "
            "else the judge).",
        )
        parser.add_argument(
            "--judges",
            default="",
            help="A panel: comma-separated judge configuration names, each making --judgments "
            "readings; the verdict is the majority of the judges' (instead of --judge).",
        )
        parser.add_argument("--name", default="", help="Run name (default: from the release).")
        parser.add_argument("--turns", type=int, default=8)
        parser.add_argument("--replicates", type=int, default=1)
        parser.add_argument("--judgments", type=int, default=3)
        parser.add_argument("--seed", type=int)
        parser.add_argument(
            "--no-anchors",
            action="store_true",
            help="Simulate without the anchor plan (to compare anchor consistency).",
        )
        parser.add_argument(
            "--rubric-grading",
            choices=["per_criterion", "all_in_one"],
            help="One grader call per criterion (default) or one for all criteria.",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="Judge by batch: judging, the anchor and fidelity checks and rubric grading go "
            "through the providers' batch APIs (OpenAI, Anthropic) at half price, answered "
            "within 24 hours. Needs Celery workers and beat (not --inline).",
        )
        parser.add_argument(
            "--max-cost",
            type=Decimal,
            help="Spending cap in the configurations' price units: refused at launch if the "
            "estimate exceeds it, paused when the call log's cost reaches it.",
        )
        parser.add_argument("--yes", action="store_true", help="Launch without asking.")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Print the plan and the estimate (calls, tokens, cost, wall time per "
            "configuration) and launch nothing.",
        )
        parser.add_argument("--watch", action="store_true", help="Only follow the run.")
        parser.add_argument(
            "--inline", action="store_true", help="Process here instead of on Celery workers."
        )

    def handle(self, *args, **options) -> None:
        if options["batch"] and options["inline"]:
            # Parked items are sent back by the reaper once a provider's batch ends (hours).
            raise CommandError(
                _(
                    "--batch needs Celery workers and beat: a provider may take up to a day to "
                    "answer a batch. Launch without --inline."
                )
            )
        try:
            if options["retry_failed"]:
                self._retry(options)
                return
            run = self._run(options)
            if options["watch"]:
                self._follow(run)
                return
            self._show_plan(run)
            if options["dry_run"]:
                self.stdout.write(
                    _("Dry run: nothing launched. Launch with --run %(run)s (without --dry-run).")
                    % {"run": run.pk}
                )
                return
            if not options["yes"] and not self._confirm():
                self.stdout.write(f"Not launched. Resume later with --run {run.pk}.")
                return
            run = runs.run_launch(run=run, dispatch=not options["inline"])
            if options["inline"]:
                self._process_inline(run)
            else:
                self._follow(run)
        except ApplicationError as error:
            raise CommandError(error.message) from error

    def _retry(self, options) -> None:
        run = EvaluationRun.objects.filter(pk=options["retry_failed"]).first()
        if run is None:
            raise CommandError(f"There is no run {options['retry_failed']}.")
        count = runs.run_retry_failed(run=run, dispatch=not options["inline"])
        self.stdout.write(f"Run {run.pk}: {count} failed conversations and rubric replies queued.")
        run.refresh_from_db()
        if options["inline"]:
            self._process_inline(run)
        else:
            self._follow(run)

    def _run(self, options) -> EvaluationRun:
        if options["run"]:
            run = EvaluationRun.objects.filter(pk=options["run"]).first()
            if run is None:
                raise CommandError(f"There is no run {options['run']}.")
            if options["max_cost"] is not None:
                run = runs.run_set_spending_cap(run=run, cap=options["max_cost"])
            return run
        if options["watch"]:
            raise CommandError("--watch follows an existing run: give --run ID.")
        return run_create_from_names(
            name=options["name"],
            release_version=options["release"],
            metric_keys=_split(options["metrics"]),
            rubric_keys=_split(options["rubric_items"]),
            target_names=_split(options["targets"]),
            simulator_name=options["simulator"],
            judge_name=options["judge"],
            judge_names=_split(options["judges"]),
            fidelity_checker_name=options["fidelity_checker"],
            turns=options["turns"],
            replicates=options["replicates"],
            judgments_per_conversation=options["judgments"],
            seed=options["seed"],
            use_anchors=not options["no_anchors"],
            rubric_grading=options["rubric_grading"],
            use_batch=options["batch"],
            spending_cap=options["max_cost"],
        )

    def _show_plan(self, run: EvaluationRun) -> None:
        plan = runs.run_plan(run)
        offline = " (offline demo models: no cost)" if plan.is_offline else ""
        self.stdout.write(f"Run {run.pk}: {run.name}")
        self.stdout.write(
            f"  {plan.metric_versions} metrics, {plan.scenarios} scenarios × {plan.targets} "
            f"targets × {run.replicates} replicates = {plan.conversations} conversations"
            + (f"; {plan.rubric.replies} rubric replies" if plan.rubric.replies else "")
        )
        estimate = run_estimate(run)
        self.stdout.write(estimate_table(estimate))
        cost = _("price unknown") if estimate.cost is None else f"${estimate.cost:.2f}"
        if estimate.cost is not None and estimate.price_unknown:
            cost += _(" + price unknown for %(names)s") % {
                "names": ", ".join(estimate.price_unknown)
            }
        self.stdout.write(
            _(
                "  estimate: %(calls)s calls, %(tokens)s tokens, %(cost)s%(offline)s, "
                "about %(wall)s (%(basis)s)"
            )
            % {
                "calls": f"{estimate.calls:,}",
                "tokens": f"{estimate.tokens:,}",
                "cost": cost,
                "offline": offline,
                "wall": duration(estimate.wall_seconds),
                "basis": estimate.wall_basis,
            }
            + (f" (cap ${run.spending_cap:.2f})" if run.spending_cap is not None else "")
        )
        for note in estimate.notes:
            self.stdout.write(f"  {note}")
        if plan.versions_missing_scenarios:
            self.stdout.write(
                self.style.WARNING(
                    "  Missing scenarios: " + ", ".join(plan.versions_missing_scenarios[:10])
                )
            )

    def _confirm(self) -> bool:
        return input("Launch? [y/N] ").strip().lower() in ("y", "yes")

    def _bar(self, run: EvaluationRun) -> tqdm:
        total = run.conversations_total
        total += run_progress(run=run).rubric.total
        return tqdm(total=total, unit="conv", file=self.stdout, dynamic_ncols=True)

    def _refresh(self, bar: tqdm, run: EvaluationRun) -> None:
        run.refresh_from_db()
        progress = run_progress(run=run)
        completed = progress.completed + progress.rubric.completed
        failed = progress.failed + progress.rubric.failed
        bar.n = completed + failed
        rate = f"{progress.per_minute:.1f}/min" if progress.per_minute else "—"
        usage = progress.usage
        bar.set_postfix_str(
            f"done {completed} failed {failed} · calls {usage.attempts:,} "
            f"(ok {usage.successes:,}, err {usage.failures:,}, cached {usage.cache_hits:,}) · "
            f"{usage.tokens:,} tok · ${usage.cost:.4f} · {rate}"
            + (f" · waiting {usage.waiting_seconds:.0f} s" if usage.waiting_seconds else ""),
            refresh=False,
        )
        bar.refresh()

    def _follow(self, run: EvaluationRun) -> None:
        bar = self._bar(run)
        try:
            while True:
                self._refresh(bar, run)
                if run.is_finished or run.status in (RunStatus.DRAFT, RunStatus.PAUSED):
                    break
                time.sleep(POLL_SECONDS)
        finally:
            bar.close()
        self._summary(run)

    def _process_inline(self, run: EvaluationRun) -> None:
        bar = self._bar(run)
        last = 0.0

        def tick(_done: int, _total: int, _stage: str = "") -> None:
            # The bar shows the whole run (rubric responses, failures) as the database has it.
            nonlocal last
            if time.monotonic() - last > 0.5:
                self._refresh(bar, run)
                last = time.monotonic()

        try:
            # No worker to count on here: the run's figures are stored before this returns.
            runs.run_process_inline(run_id=run.pk, on_progress=tick, no_worker=True)
            self._refresh(bar, run)
        finally:
            bar.close()
        self._summary(run)

    def _summary(self, run: EvaluationRun) -> None:
        run.refresh_from_db()
        style = self.style.SUCCESS if run.status == RunStatus.COMPLETED else self.style.WARNING
        self.stdout.write(
            style(
                f"Run {run.pk} is {run.get_status_display().lower()}: "
                f"{run.conversations_completed} conversations done, "
                f"{run.conversations_failed} failed."
            )
        )
        usage = run_progress(run=run).usage
        self.stdout.write(
            f"Model calls (from the call log): {usage.attempts:,} attempts, "
            f"{usage.successes:,} succeeded, {usage.failures:,} failed, "
            f"{usage.cache_hits:,} cache hits; {usage.tokens:,} tokens, ${usage.cost:.4f}."
        )
        if run.halt_reason:
            self.stdout.write(self.style.WARNING(f"Stopped: {run.halt_reason}"))
        for reason in run.paused_configurations.values():
            self.stdout.write(self.style.WARNING(f"Paused: {reason}"))


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]
