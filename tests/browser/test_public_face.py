"""The public face stays put: a smaller run made official for the same release is listed and
selectable, but the headline run and every permalink keep answering as before."""

import pytest

from core.roles import Role
from evaluations.models import Conversation
from results.models import PassRateSummary
from results.services import results_refresh
from tests.browser.conftest import screenshot, sign_in
from tests.factories import UserFactory
from tests.results.factories import completed_run
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="walks public pages in headless Chromium"),
]
PASSWORD = "correct-horse-battery"


def _small_unofficial_run(big):
    """One model of the big run over one of its metrics, same release, not yet official."""
    target = big.targets.order_by("name").first()
    scen = Conversation.objects.filter(run=big, target=target).first().scenario
    version = scen.metric_version
    run = completed_run(
        targets=[target], versions=[version], outcomes=[(scen, target, True)], publish_as=None,
        name="Small check run",
    )  # fmt: skip
    run.release = big.release
    run.save(update_fields=["release"])
    results_refresh(run=run, n_resamples=50)
    return run


def _visitor(browser, live_server):
    """A new signed-out reader: no cookies and an empty HTTP cache (pages carry max-age)."""
    context = browser.new_context(base_url=live_server.url)
    context.set_default_timeout(30_000)
    return context.new_page()


def test_making_a_small_run_official_keeps_the_headline_run_and_every_permalink(
    page, browser, live_server
):
    big = published_run(n_metrics=4)
    small = _small_unofficial_run(big)
    targets = list(big.targets.order_by("name"))
    metric = Conversation.objects.filter(run=big).first().scenario.metric_version.metric
    permalinks = [
        "/explore/",
        f"/explore/?run={big.pk}",
        f"/metrics/{metric.key}/",
        f"/metrics/{metric.key}/?run={big.pk}",
        "/results/methodology/",
        *(f"/label/{t.pk}/" for t in targets),
        *(f"/label/{t.pk}/?run={big.pk}" for t in targets),
    ]
    before = {}
    visitor = _visitor(browser, live_server)
    for path in permalinks:
        response = visitor.goto(path)
        assert response.status == 200, path
        before[path] = visitor.get_by_test_id("run-link").inner_text()
    assert set(before.values()) == {big.name}
    # The maintainer opens the small run's own results before it is public, then makes it
    # official from the run page.
    maintainer = UserFactory(roles=[Role.MAINTAINER])
    sign_in(page, maintainer.email, PASSWORD)
    page.goto(f"/evaluations/runs/{small.pk}/")
    page.get_by_role("link", name="Results (Explore)").click()
    page.wait_for_url(f"**/explore/?run={small.pk}")
    assert page.get_by_test_id("private-badge").inner_text() == "Not public — visible to staff only"
    page.goto(f"/evaluations/runs/{small.pk}/")
    page.get_by_role("button", name="Make official (public)").click()
    page.wait_for_url(f"**/evaluations/runs/{small.pk}/")
    visitor = _visitor(browser, live_server)
    for path in permalinks:
        response = visitor.goto(path)
        assert response.status == 200, path
        assert visitor.get_by_test_id("run-link").inner_text() == before[path], path
    # The small run is listed beside the headline run and opens when chosen.
    visitor.goto("/explore/")
    assert visitor.get_by_test_id("headline-badge").is_visible()
    visitor.get_by_test_id("release-runs").get_by_role("link", name="Small check run").click()
    visitor.wait_for_url(f"**/explore/?run={small.pk}")
    assert visitor.get_by_test_id("run-link").inner_text() == "Small check run"
    assert visitor.get_by_test_id("private-badge").count() == 0
    # A maintainer can still choose the small run as the headline: then it is the default.
    page.goto(f"/evaluations/runs/{small.pk}/")
    page.get_by_role("button", name="Make this the headline run of release 1.0.0").click()
    page.wait_for_url(f"**/evaluations/runs/{small.pk}/")
    assert page.get_by_test_id("headline-mark").is_visible()
    visitor = _visitor(browser, live_server)
    visitor.goto("/explore/")
    assert visitor.get_by_test_id("run-link").inner_text() == "Small check run"
    # The model missing from the small run keeps its label without a query.
    missing = next(t for t in targets if not small.targets.filter(pk=t.pk).exists())
    assert visitor.goto(f"/label/{missing.pk}/").status == 200
    assert visitor.get_by_test_id("run-link").inner_text() == big.name


def test_visitor_goes_from_a_grade_down_to_a_transcript_and_switches_to_teens(page):
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    page.goto(f"/label/{target.pk}/")
    all_figures = page.get_by_test_id("nutrition-label").inner_text()
    page.get_by_test_id("category-link").first.click()
    page.wait_for_url("**/category/**")
    assert "grade" in page.get_by_test_id("plain-lead").inner_text()
    page.get_by_test_id("metric-link").first.click()
    page.wait_for_url("**/metrics/**#scenarios")
    page.get_by_test_id("conversation-link").first.click()
    page.wait_for_url("**/conversations/**")
    assert page.get_by_test_id("evidence").first.is_visible()
    page.go_back()
    page.go_back()
    page.get_by_test_id("crumb-label").click()
    page.wait_for_url(f"**/label/{target.pk}/**")
    page.get_by_test_id("age-switch").get_by_role("link", name="Teens (13–17)").click()
    page.wait_for_url("**age=teen**")
    assert page.get_by_test_id("label-population").inner_text() == (
        "Shown for teen personas (13–17) only."
    )
    teen_figures = page.get_by_test_id("nutrition-label").inner_text()
    assert teen_figures != all_figures
    assert "0 with adult personas" in teen_figures
    assert "age=teen" in page.get_by_test_id("download-png").get_attribute("href")


def test_home_page_states_the_headline_findings_and_leads_to_the_results(page):
    run = published_run(n_metrics=2)
    rows = PassRateSummary.objects.filter(run=run, level="overall", age_context="all")
    page.goto("/")
    findings = page.get_by_test_id("finding")
    assert findings.count() == 2
    text = page.get_by_test_id("headline-findings").inner_text()
    for polarity, verb in (("negative", "avoided"), ("positive", "showed")):
        mine = rows.filter(polarity=polarity)
        passed = sum(r.n_passed for r in mine)
        n = sum(r.n_conversations for r in mine)
        assert f"The models {verb} the" in text
        assert f"in {passed} of {n} test conversations" in text
    assert f"release {run.release.version}" in text
    page.get_by_test_id("see-results").click()
    page.wait_for_url("**/explore/")
    assert page.get_by_test_id("run-link").inner_text() == run.name
    assert page.get_by_test_id("sunburst").count() == 1


@pytest.mark.parametrize("width", [1366, 390])
def test_the_wheel_names_its_segments_at_desktop_and_phone_width(browser, live_server, width):
    run = published_run(n_metrics=4)
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": 900}, is_mobile=width < 500
    )
    page = context.new_page()
    page.goto(f"/explore/?run={run.pk}&subarea=agency-purpose")
    wheel = page.get_by_test_id("sunburst").first
    names = page.get_by_test_id("wheel-name")
    assert names.count() >= 2
    for i in range(names.count()):
        box = names.nth(i).bounding_box()
        wheel_box = wheel.bounding_box()
        # Legible: at least 11 CSS pixels tall on screen, and inside the wheel.
        assert box["height"] >= 11, (width, box)
        assert wheel_box["x"] <= box["x"]
        assert box["x"] + box["width"] <= wheel_box["x"] + wheel_box["width"]
    key = page.get_by_test_id("wheel-key").first
    assert key.is_visible()
    assert "Agency" in key.inner_text() or "agency" in key.inner_text().lower()
    assert (
        page.get_by_test_id("key-metrics").first.get_by_role("link").count() == 2
    )  # the positive half of four
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"explore-wheel-{width}")
    context.close()
