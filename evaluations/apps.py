from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        from core.pagecache import stamp_part_register

        from .selectors import official_runs_stamp_sql

        stamp_part_register("evaluations.official_runs", official_runs_stamp_sql)

        # Registers the offline demo model's content for the evaluation schemas.
        from core import events

        from . import offline  # noqa: F401
        from .interop_views import release_run_downloads

        events.subscribe(events.RELEASE_DOWNLOADS, release_run_downloads)
