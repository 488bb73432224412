"""A visitor's journey through the public results in Chromium, and the phone layout.

Screenshots of each step go to var/screenshots/ (CI keeps them as artifacts).
"""

import threading
from pathlib import Path

import pytest

from evaluations.models import Conversation
from results.label_files import label_files_render
from tests.results.public_data import EVIDENCE, published_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="walks public pages in headless Chromium"),
]

# The first few elements reaching past the right edge, to name the culprit when a page overflows.
WIDER_THAN_SCREEN = """
[...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .slice(0, 5)
  .map(e => e.tagName + '.' + e.className)
"""
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"public-{name}.png"), full_page=True)


def test_visitor_traces_a_figure_down_to_the_evidence_and_shares_a_label(page, tmp_path):
    run = published_run(n_metrics=4)
    first, second = run.targets.order_by("name")[:2]
    page.goto("/explore/")
    assert page.get_by_test_id("sunburst").count() == 1
    _shot(page, "explore")
    # Choosing teen applies at once (explore.js submits the form).
    with page.expect_navigation():
        page.select_option("#f-age", "teen")
    assert "age=teen" in page.url
    # Drill: subarea segment of the wheel, then a metric of its ring/table.
    page.locator('.ib-seg.ib-ring-1[data-key="agency-purpose"]').click()
    page.wait_for_url("**subarea=agency-purpose**")
    assert page.locator(".ib-ring-2").count() > 0
    _shot(page, "explore-subarea")
    page.get_by_test_id("explore-table").get_by_role("link").first.click()
    page.wait_for_url("**/metrics/**")
    assert page.get_by_test_id("metric-results").is_visible()
    _shot(page, "metric")
    # A scenario, then a transcript with the judge's evidence highlighted.
    scenario = page.get_by_test_id("scenario").first
    scenario.get_by_test_id("conversation-link").first.click()
    page.wait_for_url("**/conversations/**")
    evidence = page.get_by_test_id("evidence").first
    assert evidence.is_visible()
    assert evidence.inner_text() == EVIDENCE
    assert page.get_by_test_id("latent-goal").is_visible()
    _shot(page, "conversation")
    # Back up by breadcrumbs: scenario, then subarea.
    page.get_by_test_id("crumb-scenario").click()
    page.wait_for_url("**/metrics/**#scenario-*")
    page.get_by_test_id("crumb-subarea").click()
    page.wait_for_url("**/explore/**subarea=agency-purpose**")
    # The model's Nutrition Label, compared with another, downloaded as an image.
    page.get_by_role("link", name=f"Nutrition Label of {first.name}").click()
    page.wait_for_url("**/label/**")
    assert page.get_by_test_id("grade").count() >= 2
    _shot(page, "label")
    # The label files are drawn when the figures change (after a refresh), never on a
    # visitor's request: drawn here as the worker would, in a thread of its own because this
    # one drives the browser.
    drawing = threading.Thread(target=label_files_render, kwargs={"run": run})
    drawing.start()
    drawing.join()
    with page.expect_download() as download_info:
        page.get_by_test_id("download-svg").click()
    target = tmp_path / "label.svg"
    download_info.value.save_as(target)
    assert target.read_text().startswith("<svg")
    with page.expect_download() as download_info:
        page.get_by_test_id("download-png").click()
    png = tmp_path / "label.png"
    download_info.value.save_as(png)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page.select_option("#f-b", str(second.pk))
    page.get_by_role("button", name="Compare side by side").click()
    page.wait_for_url("**/label/compare/**")
    assert page.get_by_test_id("nutrition-label").count() == 2
    _shot(page, "label-compare")


def test_public_pages_fit_a_phone_without_horizontal_scrolling(phone_page):
    run = published_run(n_metrics=2)
    first, second = run.targets.order_by("name")[:2]
    conversation = Conversation.objects.filter(run=run).first()
    key = conversation.scenario.metric_version.metric.key
    pages = {
        "explore": f"/explore/?compare={second.pk}",
        "metrics": "/metrics/",
        "metric": f"/metrics/{key}/",
        "conversation": f"/conversations/{conversation.pk}/",
        "label": f"/label/{first.pk}/",
        "compare": f"/label/compare/?a={first.pk}&b={second.pk}",
        "compare-chooser": "/label/compare/",
        "methodology": "/results/methodology/",
    }
    for name, url in pages.items():
        phone_page.goto(url)
        width = phone_page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        wide = phone_page.evaluate(WIDER_THAN_SCREEN)
        assert width[0] <= width[1], (name, width, wide)
        _shot(phone_page, f"phone-{name}")


def test_a_reader_who_chose_teens_keeps_the_choice_from_label_to_explore(page):
    run = published_run()
    target = run.targets.order_by("name").first()
    page.goto(f"/label/{target.pk}/?run={run.pk}&age=teen")
    switch = page.get_by_test_id("age-switch")
    assert switch.locator("a.active").get_attribute("data-age") == "teen"
    page.get_by_test_id("audience-links").get_by_role("link", name="parent").click()
    page.wait_for_url("**/for/parent/**")
    assert switch.locator("a.active").get_attribute("data-age") == "teen"
    page.get_by_test_id("crumb-overview").click()
    page.wait_for_url("**/label/?**")
    assert switch.locator("a.active").get_attribute("data-age") == "teen"
    page.get_by_test_id("crumb-explore").click()
    page.wait_for_url("**/explore/**")
    assert page.locator("#f-age").input_value() == "teen"
    # The bar's Explore link keeps it too, and so does the way back to a label.
    nav_explore = page.get_by_label("Main navigation").get_by_role("link", name="Explore")
    assert "age=teen" in nav_explore.get_attribute("href")
    page.get_by_test_id("explore-label-link").first.click()
    page.wait_for_url("**/label/**")
    assert switch.locator("a.active").get_attribute("data-age") == "teen"
