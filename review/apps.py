from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Expert review"

    def ready(self) -> None:
        from metrics_registry.hooks import register_contested_keep_provider

        from . import kinds  # noqa: F401 - registers the item adapters
        from .services import contested_metric_ids_kept

        register_contested_keep_provider(contested_metric_ids_kept)
