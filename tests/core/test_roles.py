import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from core.roles import Role, user_has_role, user_roles
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_data_migration_creates_one_group_per_role():
    names = set(Group.objects.values_list("name", flat=True))
    assert {role.value for role in Role} <= names


def test_user_roles_follow_group_membership(researcher):
    assert user_roles(researcher) == {Role.CONTRIBUTOR, Role.RESEARCHER}
    assert user_has_role(researcher, Role.RESEARCHER)
    assert not user_has_role(researcher, Role.MAINTAINER)


def test_superuser_holds_every_role():
    admin = UserFactory(is_superuser=True)
    assert user_roles(admin) == set(Role)


def test_inactive_user_holds_no_role():
    user = UserFactory(roles=[Role.MAINTAINER], is_active=False)
    assert user_roles(user) == frozenset()


@pytest.mark.parametrize(
    ("fixture", "allowed"),
    [
        ("contributor", False),
        ("researcher", False),
        ("expert_reviewer", False),
        ("maintainer", True),
    ],
)
def test_only_maintainers_open_the_admin(request, client_for, fixture, allowed):
    client = client_for(request.getfixturevalue(fixture))
    response = client.get(reverse("admin:index"))
    assert (response.status_code == 200) is allowed
    if not allowed:
        assert response.status_code == 302
        assert reverse("admin:login") in response["Location"]


def test_maintainer_can_use_model_admin_without_staff_flag(client_for, maintainer):
    assert not maintainer.is_staff
    response = client_for(maintainer).get(reverse("admin:llm_modelconfiguration_changelist"))
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("fixture", "visible", "hidden"),
    [
        ("contributor", [], ["Administration"]),
        ("maintainer", ["Administration"], []),
    ],
)
def test_navigation_shows_each_role_its_pages(request, client_for, fixture, visible, hidden):
    page = (
        client_for(request.getfixturevalue(fixture)).get(reverse("core:dashboard")).content.decode()
    )
    for label in visible:
        assert label in page
    for label in hidden:
        assert label not in page


def test_dashboard_lists_the_users_roles(client_for, expert_reviewer):
    page = client_for(expert_reviewer).get(reverse("core:dashboard")).content.decode()
    assert "Expert Reviewer" in page
    assert "Rate metrics, scenarios" in page
    assert "Configure models" not in page


def test_dashboard_requires_login(client):
    response = client.get(reverse("core:dashboard"))
    assert response.status_code == 302
    assert reverse("account_login") in response["Location"]
