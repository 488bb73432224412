from django.apps import AppConfig
from django.db.models.signals import post_migrate


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Evaluations"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from core.pagecache import stamp_part_register

        # Registers the offline demo model's content for the evaluation and rubric schemas.
        from . import (  # noqa: F401
            offline,
            offline_es_replies,
            offline_fidelity,
            offline_judge,
            rubric_offline,
        )
        from .crisis_seed import crisis_lines_seed
        from .selectors import official_runs_stamp_sql

        stamp_part_register("evaluations.official_runs", official_runs_stamp_sql)
        post_migrate.connect(crisis_lines_seed, sender=self)
