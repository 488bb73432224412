import pytest

from core.demo import DEMO_ACCOUNTS, DEMO_PASSWORD, demo_accounts_seed
from core.roles import Role
from tests.browser.conftest import screenshot, sign_in
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


# Laptop widths: the bar must hold every entry (and the account menu) without widening the page.
LAPTOP_WIDTHS = [1280, 1366]
WIDTHS = """() => ({
    nav: document.querySelector('nav[aria-label="Main navigation"]').scrollWidth,
    page: document.documentElement.scrollWidth,
})"""


def _assert_the_bar_fits(page, width: int, who: str) -> None:
    widths = page.evaluate(WIDTHS)
    assert widths["nav"] <= width, (who, widths)
    assert widths["page"] <= width, (who, widths)


def _assert_in_view(locator, width: int, who: str) -> None:
    box = locator.bounding_box()
    assert box is not None, who
    assert box["x"] >= 0, (who, box)
    assert box["x"] + box["width"] <= width, (who, box)


@pytest.mark.parametrize("width", LAPTOP_WIDTHS)
def test_the_bar_fits_a_laptop_for_every_role_with_the_account_menu_in_view(
    browser, live_server, width
):
    demo_accounts_seed()
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": 800}
    )
    page = context.new_page()
    page.goto("/")
    _assert_the_bar_fits(page, width, "public")
    bar = page.get_by_label("Main navigation")
    # "Sign in" on one line: no taller than the bar's other entries.
    sign_in_height = bar.get_by_role("link", name="Sign in").bounding_box()["height"]
    assert sign_in_height <= bar.get_by_role("link", name="Explore").bounding_box()["height"]
    for account in DEMO_ACCOUNTS:
        context.clear_cookies()
        sign_in(page, account.email, DEMO_PASSWORD)
        _assert_the_bar_fits(page, width, account.email)
        account_menu = page.get_by_test_id("account-menu")
        account_menu.click()
        _assert_in_view(account_menu, width, account.email)
        _assert_in_view(page.get_by_role("button", name="Sign out"), width, account.email)
        screenshot(page, f"nav-{account.email.split('@')[0]}-{width}")
    context.close()
