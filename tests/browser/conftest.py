"""Headless Chromium through Playwright, against pytest-django's live server.

Debian's chromium is used (Playwright's own browser download is not available here). When it
is missing the browser tests are skipped locally; CI sets REQUIRE_BROWSER=1 to fail instead.
"""

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
# Screenshots of what people see, kept by CI as artifacts.
SCREENSHOTS = Path(
    os.environ.get("SCREENSHOT_DIR") or Path(__file__).resolve().parents[2] / "var" / "screenshots"
)


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


@pytest.fixture(scope="module")
def browser():
    """One Chromium for a module's tests. Not for the session: Playwright's sync API keeps an
    event loop running in this thread until it stops, and the tests that run after a browser
    module in the same process (under pytest-xdist, any test) must find none, nor the variable
    below (a subprocess they start would inherit it)."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {CHROMIUM}; install Debian's chromium package.")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # With that loop running, the ORM calls made by fixtures and assertions here are still
    # synchronous and safe.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-background-networking",
                "--disable-gpu",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(45_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(45_000)
    page = context.new_page()
    yield page
    context.close()


def sign_in(page, email: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_url("**/dashboard/")
