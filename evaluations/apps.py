from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        # Registers the offline demo model's content for the evaluation schemas.
        from django.db.models.signals import post_migrate

        from . import offline  # noqa: F401
        from .rubric_dimensions import dimension_rows_ensure

        post_migrate.connect(dimension_rows_ensure, sender=self)

        from metrics_registry.hooks import register_release_download_provider

        from .interop_views import release_run_downloads

        register_release_download_provider(release_run_downloads)
