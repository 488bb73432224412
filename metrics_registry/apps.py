from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MetricsRegistryConfig(AppConfig):
    name = "metrics_registry"
    verbose_name = "Metrics registry"

    def ready(self) -> None:
        from .taxonomy import reference_rows_ensure

        post_migrate.connect(reference_rows_ensure, sender=self)
