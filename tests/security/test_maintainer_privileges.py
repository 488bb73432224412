"""Maintainers run the platform but cannot take over accounts."""

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth.models import Group
from django.urls import reverse

from core.backends import MaintainerPermissionBackend
from core.models import RoleChange
from core.roles import Role, user_roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def victim(db):
    return UserFactory(roles=[Role.CONTRIBUTOR])


def _escalating_admin_requests(victim):
    """(method, url, data) for every admin view that could change an account or a group."""
    group = Group.objects.get(name=Role.MAINTAINER.value)
    email = EmailAddress.objects.get(user=victim)
    new_password = {"password1": "Owned-by-maintainer-1", "password2": "Owned-by-maintainer-1"}
    change = {
        "username": victim.username,
        "email": victim.email,
        "is_staff": "on",
        "is_superuser": "on",
        "is_active": "on",
        "groups": [group.pk],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    return [
        ("get", reverse("admin:auth_user_changelist"), None),
        ("get", reverse("admin:auth_user_add"), None),
        ("post", reverse("admin:auth_user_add"), {"username": "new", **new_password}),
        ("get", reverse("admin:auth_user_change", args=[victim.pk]), None),
        ("post", reverse("admin:auth_user_change", args=[victim.pk]), change),
        ("get", reverse("admin:auth_user_password_change", args=[victim.pk]), None),
        ("post", reverse("admin:auth_user_password_change", args=[victim.pk]), new_password),
        ("get", reverse("admin:auth_user_delete", args=[victim.pk]), None),
        ("post", reverse("admin:auth_user_delete", args=[victim.pk]), {"post": "yes"}),
        ("get", reverse("admin:auth_group_changelist"), None),
        ("get", reverse("admin:auth_group_add"), None),
        ("post", reverse("admin:auth_group_add"), {"name": "Staff-ish"}),
        ("get", reverse("admin:auth_group_change", args=[group.pk]), None),
        ("post", reverse("admin:auth_group_change", args=[group.pk]), {"name": "Renamed"}),
        ("get", reverse("admin:account_emailaddress_change", args=[email.pk]), None),
        (
            "post",
            reverse("admin:account_emailaddress_change", args=[email.pk]),
            {"user": victim.pk, "email": "attacker@example.org", "verified": "on", "primary": "on"},
        ),
    ]


def test_every_escalating_account_view_is_refused_to_a_maintainer(client_for, maintainer, victim):
    client = client_for(maintainer)
    for method, url, data in _escalating_admin_requests(victim):
        response = getattr(client, method)(url, data) if data else getattr(client, method)(url)
        assert response.status_code in (403, 404), (method, url, response.status_code)
    victim.refresh_from_db()
    assert victim.check_password("correct-horse-battery")
    assert not victim.is_staff
    assert not victim.is_superuser
    assert user_roles(victim) == {Role.CONTRIBUTOR}
    assert EmailAddress.objects.get(user=victim).email == victim.email
    assert set(Group.objects.values_list("name", flat=True)) == {role.value for role in Role}
    maintainer.refresh_from_db()
    assert not maintainer.is_staff
    assert not maintainer.is_superuser


def test_the_admin_index_offers_maintainers_no_account_models(client_for, maintainer):
    page = client_for(maintainer).get(reverse("admin:index")).content.decode()
    assert reverse("admin:llm_modelconfiguration_changelist") in page
    assert reverse("admin:metrics_registry_release_changelist") in page
    assert reverse("admin:auth_user_changelist") not in page
    assert reverse("admin:auth_group_changelist") not in page


@pytest.mark.parametrize(
    ("perm", "granted"),
    [
        ("llm.change_modelconfiguration", True),
        ("evaluations.add_evaluationrun", True),
        ("metrics_registry.change_release", True),
        ("review.change_ratingqueue", True),
        ("core.view_rolechange", True),
        ("core.change_rolechange", False),
        ("auth.change_user", False),
        ("auth.view_user", False),
        ("auth.change_group", False),
        ("account.change_emailaddress", False),
        ("sessions.view_session", False),
        ("sites.change_site", False),
    ],
)
def test_maintainer_permissions_are_an_allow_list(maintainer, perm, granted):
    assert MaintainerPermissionBackend().has_perm(maintainer, perm) is granted
    assert maintainer.has_perm(perm) is granted


def test_non_maintainers_get_nothing_from_the_backend(researcher):
    assert not researcher.has_perm("llm.change_modelconfiguration")


def test_staff_with_explicit_permissions_keep_them():
    admin = UserFactory(is_staff=True, is_superuser=True)
    assert admin.has_perm("auth.change_user")


def test_a_maintainer_grants_and_withdraws_roles_and_each_change_is_recorded(
    client_for, maintainer, victim
):
    client = client_for(maintainer)
    url = reverse("core:roles")
    page = client.get(url, {"q": victim.email}).content.decode()
    assert victim.email in page
    response = client.post(
        url, {"user_id": victim.pk, "roles": [Role.CONTRIBUTOR.value, Role.EXPERT_REVIEWER.value]}
    )
    assert response.status_code == 302
    victim.refresh_from_db()
    assert user_roles(victim) == {Role.CONTRIBUTOR, Role.EXPERT_REVIEWER}
    change = RoleChange.objects.get()
    assert (change.actor, change.user, change.role, change.granted) == (
        maintainer,
        victim,
        Role.EXPERT_REVIEWER.value,
        True,
    )
    client.post(url, {"user_id": victim.pk, "roles": [Role.EXPERT_REVIEWER.value]})
    withdrawal = RoleChange.objects.first()
    assert (withdrawal.role, withdrawal.granted) == (Role.CONTRIBUTOR.value, False)
    page = client.get(url).content.decode()
    assert "withdrew Contributor" in page
    assert "granted Expert Reviewer" in page
    assert maintainer.email in page


def test_the_roles_page_assigns_only_platform_roles(client_for, maintainer, victim):
    Group.objects.create(name="Site admins")
    response = client_for(maintainer).post(
        reverse("core:roles"), {"user_id": victim.pk, "roles": ["Site admins"]}
    )
    assert response.status_code == 400
    assert not victim.groups.filter(name="Site admins").exists()
    assert not RoleChange.objects.exists()


@pytest.mark.parametrize("fixture", ["contributor", "researcher", "expert_reviewer"])
def test_only_maintainers_open_the_roles_page(request, client_for, fixture, victim):
    client = client_for(request.getfixturevalue(fixture))
    assert client.get(reverse("core:roles")).status_code == 403
    response = client.post(
        reverse("core:roles"), {"user_id": victim.pk, "roles": [Role.MAINTAINER.value]}
    )
    assert response.status_code == 403
    assert Role.MAINTAINER not in user_roles(victim)
