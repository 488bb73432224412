from django.contrib.auth.backends import BaseBackend

from .roles import Role, user_has_role


class MaintainerPermissionBackend(BaseBackend):
    """Maintainers run the platform, so the admin treats them as holding every model permission."""

    def has_perm(self, user_obj, perm, obj=None) -> bool:
        return user_has_role(user_obj, Role.MAINTAINER)

    def has_module_perms(self, user_obj, app_label) -> bool:
        return user_has_role(user_obj, Role.MAINTAINER)
