from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        from core.pagecache import stamp_part_register

        from .selectors import official_runs_stamp_sql

        stamp_part_register("evaluations.official_runs", official_runs_stamp_sql)

        # Registers the offline demo model's content for the evaluation schemas.
        from django.db.models.signals import post_migrate

        from . import offline  # noqa: F401
        from .rubric_dimensions import dimension_rows_ensure

        post_migrate.connect(dimension_rows_ensure, sender=self)

        from core import events

        from .interop_views import release_run_downloads
        from .services.rubric_grading import release_rubric_freeze

        events.subscribe(events.RELEASE_DOWNLOADS, release_run_downloads)
        events.subscribe(events.RELEASE_PUBLISHING, release_rubric_freeze)

        from .demo import demo_seed_steps

        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
