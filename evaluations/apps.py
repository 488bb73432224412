from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        # Registers the offline demo model's content for the evaluation schemas.
        from . import offline  # noqa: F401
