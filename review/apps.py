from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Expert review"

    def ready(self) -> None:
        from core import events

        from . import kinds  # noqa: F401 - registers the item adapters
        from .services import contested_metric_ids_kept

        events.subscribe(events.CONTESTED_KEPT, contested_metric_ids_kept)

        from .demo import demo_seed_steps

        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
