"""What the Maintainer role may do in the admin, and nothing more.

Maintainers run the platform (model configurations, runs, releases, review queues,
submissions), so they hold the permissions of those apps. Accounts are not theirs to edit in the
admin: `auth`, allauth's email addresses, sessions and sites stay with staff holding explicit
permissions, so a maintainer can never set a password, an email, a staff or superuser flag or a
group. Platform roles are granted on the Roles page (core.views.RoleAssignmentView), audited.
"""

from django.contrib.auth.backends import BaseBackend
from django.db.models import Model

from .roles import AnyUser, Role, user_has_role

# App labels whose models maintainers manage.
MAINTAINER_APPS = frozenset(
    {"llm", "metrics_registry", "evaluations", "rubrics", "review", "submissions", "results"}
)
# Single permissions outside those apps: reading the role-change audit trail.
MAINTAINER_EXTRA_PERMISSIONS = frozenset({"core.view_rolechange"})


def maintainer_may(perm: str) -> bool:
    """True when the Maintainer role carries `perm` ("app_label.codename")."""
    app_label, _, _ = perm.partition(".")
    return app_label in MAINTAINER_APPS or perm in MAINTAINER_EXTRA_PERMISSIONS


class MaintainerPermissionBackend(BaseBackend):
    """Grants maintainers the permissions of the apps they run; never those of accounts."""

    def has_perm(self, user_obj: AnyUser, perm: str, obj: Model | None = None) -> bool:
        return maintainer_may(perm) and user_has_role(user_obj, Role.MAINTAINER)

    def has_module_perms(self, user_obj: AnyUser, app_label: str) -> bool:
        if not user_has_role(user_obj, Role.MAINTAINER):
            return False
        return app_label in MAINTAINER_APPS or any(
            perm.startswith(f"{app_label}.") for perm in MAINTAINER_EXTRA_PERMISSIONS
        )
