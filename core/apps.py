from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        # Imported once the app registry is ready: these modules load models.
        from .dbwait import connection_watch
        from .roles import role_groups_ensure

        post_migrate.connect(role_groups_ensure, sender=self)
        connection_created.connect(connection_watch, dispatch_uid="core.dbwait")
