import pytest

from core.roles import Role
from tests.browser.conftest import sign_in
from tests.factories import UserFactory

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="signs in and walks pages in headless Chromium"),
]


def test_a_maintainer_signs_in_and_navigates_to_the_admin(page):
    UserFactory(email="m@example.org", username="m@example.org", roles=[Role.MAINTAINER])
    sign_in(page, "m@example.org", "correct-horse-battery")
    assert page.get_by_test_id("role-card").first.inner_text().startswith("MAINTAINER")
    page.get_by_test_id("workspace-menu").click()
    page.get_by_label("Main navigation").get_by_role("link", name="Administration").click()
    page.wait_for_url("**/admin/")
    assert "ImpactBench administration" in page.content()


def test_a_contributor_sees_only_contributor_pages_and_can_sign_out(page):
    UserFactory(email="c@example.org", username="c@example.org", roles=[Role.CONTRIBUTOR])
    sign_in(page, "c@example.org", "correct-horse-battery")
    page.get_by_test_id("workspace-menu").click()
    menu = page.get_by_label("Main navigation").locator(".dropdown-menu.show")
    assert menu.get_by_role("link", name="My submissions").is_visible()
    assert menu.get_by_role("link", name="Administration").count() == 0
    page.get_by_role("link", name="Taxonomy").click()
    assert page.get_by_role("heading", name="Areas and subareas").is_visible()
    page.locator("nav .dropdown-toggle", has_text="c@example.org").click()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_load_state()
    assert page.get_by_label("Main navigation").get_by_role("link", name="Sign in").is_visible()


def test_navigation_collapses_on_a_phone(phone_page):
    phone_page.goto("/")
    assert not phone_page.get_by_role("link", name="Taxonomy").is_visible()
    phone_page.get_by_role("button", name="Toggle navigation").click()
    phone_page.get_by_role("link", name="Taxonomy").wait_for(state="visible")
