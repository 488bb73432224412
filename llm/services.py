"""Writes: saving configurations together with the roles they fill."""

from collections.abc import Iterable

from django.db import transaction

from .models import ModelConfiguration, ModelRole, ModelRoleAssignment


@transaction.atomic
def configuration_save(
    *,
    configuration: ModelConfiguration,
    roles: Iterable[str],
    default_roles: Iterable[str] = (),
) -> ModelConfiguration:
    """Save `configuration` and make its role assignments exactly `roles`.

    For each role in `default_roles` it becomes the default, taking over from the previous
    default (one default per role is a database constraint).
    """
    roles = set(roles) | set(default_roles)
    unknown = roles - set(ModelRole.values)
    if unknown:
        raise ValueError(f"Unknown model roles: {', '.join(sorted(unknown))}")
    configuration.full_clean()
    configuration.save()

    configuration.role_assignments.exclude(role__in=roles).delete()
    default_roles = set(default_roles)
    # Clear the previous defaults first so the one-default constraint never sees two.
    ModelRoleAssignment.objects.filter(role__in=default_roles, is_default=True).exclude(
        configuration=configuration
    ).update(is_default=False)
    for role in roles:
        ModelRoleAssignment.objects.update_or_create(
            role=role,
            configuration=configuration,
            defaults={"is_default": role in default_roles},
        )
    return configuration
