from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MetricsRegistryConfig(AppConfig):
    name = "metrics_registry"
    verbose_name = "Metrics registry"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core.pagecache import stamp_part_register

        from .selectors import metrics_stamp_sql, releases_stamp_sql
        from .taxonomy import reference_rows_ensure
        from .text_selectors import metric_texts_stamp_sql

        stamp_part_register("metrics_registry.metrics", metrics_stamp_sql)
        stamp_part_register("metrics_registry.releases", releases_stamp_sql)
        stamp_part_register("metrics_registry.metric_texts", metric_texts_stamp_sql)
        post_migrate.connect(reference_rows_ensure, sender=self)
