"""The four roles of the platform, held as Django groups created by a data migration."""

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from django.apps import apps as global_apps
from django.apps.registry import Apps
from django.contrib.auth.mixins import AccessMixin
from django.contrib.auth.models import AnonymousUser, Group, User
from django.http import HttpRequest, HttpResponseBase
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from django.views import View

StrOrPromise = str | Promise


class Role(StrEnum):
    CONTRIBUTOR = "Contributor"
    RESEARCHER = "Researcher"
    EXPERT_REVIEWER = "Expert Reviewer"
    MAINTAINER = "Maintainer"


# The names people read; the enum's values are the groups' stored names and stay English.
ROLE_LABELS: dict[Role, StrOrPromise] = {
    Role.CONTRIBUTOR: pgettext_lazy("role", "Contributor"),
    Role.RESEARCHER: pgettext_lazy("role", "Researcher"),
    Role.EXPERT_REVIEWER: pgettext_lazy("role", "Expert Reviewer"),
    Role.MAINTAINER: pgettext_lazy("role", "Maintainer"),
}

ROLE_DESCRIPTIONS: dict[Role, StrOrPromise] = {
    Role.CONTRIBUTOR: _("Submit constructs and follow what became of them."),
    Role.RESEARCHER: _("Review drafted metric candidates, curate scenarios, build rating queues."),
    Role.EXPERT_REVIEWER: _("Rate metrics, scenarios, conversations and judge verdicts."),
    Role.MAINTAINER: _("Configure models, run evaluations, assemble and publish releases."),
}


# A request's user: an account (the default user model, AUTH_USER_MODEL) or nobody.
AnyUser = User | AnonymousUser

# The attribute a user object carries its roles in for the rest of the request.
_ROLES_CACHE = "_impactbench_roles"


def user_roles(user: AnyUser) -> frozenset[Role]:
    """Roles of a user; a superuser holds all of them. Cached on the user object per request."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    cached: frozenset[Role] | None = getattr(user, _ROLES_CACHE, None)
    if cached is not None:
        return cached
    if user.is_superuser:
        roles = frozenset(Role)
    else:
        names = set(user.groups.values_list("name", flat=True))
        roles = frozenset(role for role in Role if role.value in names)
    setattr(user, _ROLES_CACHE, roles)
    return roles


def user_roles_forget(user: AnyUser) -> None:
    """Drop the roles cached on `user` (its groups have just changed)."""
    if hasattr(user, _ROLES_CACHE):
        delattr(user, _ROLES_CACHE)


def user_has_role(user: AnyUser, *roles: Role) -> bool:
    """True when the user holds any of `roles`."""
    return bool(user_roles(user) & set(roles))


def user_add_roles(user: User, roles: Iterable[Role]) -> None:
    for role in roles:
        group, _ = Group.objects.get_or_create(name=role.value)
        user.groups.add(group)
    user_roles_forget(user)


class RoleRequiredMixin(AccessMixin, View):
    """Class-based views: login required, then any one of `required_roles`."""

    required_roles: tuple[Role, ...] = ()

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if self.required_roles and not user_has_role(request.user, *self.required_roles):
            self.raise_exception = True
            return self.handle_no_permission()
        return super().dispatch(request, *args, **kwargs)


def role_groups_ensure(
    sender: object = None, *, apps: Apps | None = None, using: str = "default", **kwargs: Any
) -> None:
    """Create any missing role group. Connected to post_migrate, so a flushed database (tests,
    `manage.py flush`) gets its roles back; the data migration creates them the first time."""
    apps = apps or global_apps
    try:
        Group = apps.get_model("auth", "Group")
    except LookupError:
        return
    for role in Role:
        Group.objects.using(using).get_or_create(name=role.value)
