from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "results"
    verbose_name = "Results"

    def ready(self) -> None:
        from core.pagecache import stamp_part_register

        from .selectors import analyses_stamp_sql

        stamp_part_register("results.analyses", analyses_stamp_sql)

        from core import events

        from .services.freshness import on_ratings_changed, on_run_completed

        events.subscribe(events.RUN_COMPLETED, on_run_completed)
        events.subscribe(events.RATINGS_CHANGED, on_ratings_changed)

        from .demo import demo_seed_steps

        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
