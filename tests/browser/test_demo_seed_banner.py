"""The demo seeding banner keeps itself current in a real browser, under the site's CSP."""

import os

import pytest

from demo.progress import COMPLETE, SeedProgress, progress_write

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="headless Chromium watches a seed run to its end"),
]


def _progress(**fields) -> SeedProgress:
    values = {"step": "run", "label": "run", "unit": "conversations", "total": 1152}
    values |= {"step_index": 7, "steps": 9, "share_before": 0.14, "share": 0.8}
    return SeedProgress(pid=os.getpid(), **(values | fields))


def test_the_banner_follows_the_seed_without_a_reload_and_offers_one_when_done(
    page, settings, tmp_path
):
    settings.DEMO_SEED_PROGRESS_FILE = tmp_path / "demo-seed.json"
    progress_write(_progress(done=12))
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.goto("/")
    banner = page.get_by_test_id("demo-seed-banner")
    assert "run 12 / 1,152 conversations" in banner.inner_text()
    page.evaluate("window.notReloaded = true")

    progress_write(_progress(done=900))
    banner.get_by_text("run 900 / 1,152 conversations").wait_for()
    bar = banner.locator("[data-demo-seed-bar]")
    width = bar.evaluate("el => el.style.width")
    assert width == f"{100 * (0.14 + 0.8 * 900 / 1152):.1f}%"

    progress_write(_progress(state=COMPLETE, done=1152))
    banner.get_by_text("Demo data is ready.").wait_for()
    assert banner.get_by_role("link", name="Reload this page to see it.").is_visible()
    assert page.evaluate("window.notReloaded") is True  # all of it without leaving the page
    assert not refused
    page.reload()
    assert page.get_by_test_id("demo-seed-banner").count() == 0
