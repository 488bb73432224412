from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Expert review"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core import events

        from . import kinds  # noqa: F401 - registers the item adapters
        from .demo import demo_seed_steps
        from .services import contested_metric_ids_kept

        events.subscribe(events.CONTESTED_KEPT, contested_metric_ids_kept)
        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
