from django.apps import AppConfig


class ResultsConfig(AppConfig):
    name = "results"
    verbose_name = "Results"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core import events
        from core.pagecache import stamp_part_register
        from evaluations.events import RunCompleted, RunDesignated
        from review.events import BlindHoldChanged, RatingsChanged

        # The services before the label modules: each imports the other's functions.
        from . import services  # noqa: F401
        from .cache_values import page_cache_values_register_all
        from .label_files import on_run_designated
        from .published_pages import on_published_figures_changed
        from .selectors import analyses_stamp_sql, anchor_studies_stamp_sql
        from .services.freshness import (
            on_blind_hold_changed,
            on_ratings_changed,
            on_run_completed,
            on_swap_run_completed,
        )

        stamp_part_register("results.analyses", analyses_stamp_sql)
        stamp_part_register("results.anchor_studies", anchor_studies_stamp_sql)
        page_cache_values_register_all()
        events.subscribe(RunCompleted, on_run_completed)
        events.subscribe(RunCompleted, on_swap_run_completed)
        events.subscribe(RatingsChanged, on_ratings_changed)
        events.subscribe(BlindHoldChanged, on_blind_hold_changed)
        events.subscribe(RunDesignated, on_run_designated)
        events.subscribe(RunDesignated, on_published_figures_changed)
