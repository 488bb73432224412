from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "Submissions"

    def ready(self) -> None:
        # The offline demo model's drafts register themselves for the drafting schema.
        from . import offline_drafter  # noqa: F401
