from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MetricsRegistryConfig(AppConfig):
    name = "metrics_registry"
    verbose_name = "Metrics registry"

    def ready(self) -> None:
        from core.pagecache import stamp_part_register

        from .selectors import metrics_stamp_sql, releases_stamp_sql

        stamp_part_register("metrics_registry.metrics", metrics_stamp_sql)
        stamp_part_register("metrics_registry.releases", releases_stamp_sql)

        from .taxonomy import reference_rows_ensure

        post_migrate.connect(reference_rows_ensure, sender=self)

        from core import events

        from .demo import demo_seed_steps

        events.subscribe(events.DEMO_SEED_STEPS, demo_seed_steps)
