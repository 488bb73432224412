from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Expert review"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core import events
        from core.pagecache import stamp_part_register

        from . import kinds  # noqa: F401 - registers the item adapters
        from .blindness import blind_held_scenarios, blind_holds_stamp_sql
        from .demo import demo_seed_steps
        from .selectors import calibration_ratings_stamp_sql
        from .services import contested_metric_ids_kept

        events.subscribe(events.CONTESTED_KEPT, contested_metric_ids_kept)
        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
        # Blind items keep their scenarios off public pages until their queue closes.
        events.subscribe(events.BLIND_HOLDS, blind_held_scenarios)
        stamp_part_register("review.blind_holds", blind_holds_stamp_sql)
        # Calibrated rates change with every calibration rating: pages show them at once.
        stamp_part_register("review.calibration_ratings", calibration_ratings_stamp_sql)
