"""What people see on small and live screens: the rater's phone layout, offline labels, and a
scenario list that fills itself in. Screenshots go to var/screenshots/ (SCREENSHOT_DIR)."""

import threading
import time

import pytest

from core.roles import Role
from evaluations.models import Turn
from evaluations.services.scenarios import scenarios_generate
from review.services import queue_create
from tests.browser.conftest import screenshot, sign_in
from tests.evaluations.factories import ConversationFactory, current_version
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="workspace pages in headless Chromium"),
]

LONG_REPLY = "I hear how hard this week has been for you, and that matters. " * 12


def _offline_conversation_queue():
    conversation = ConversationFactory(status="completed", is_offline=True)
    for index in range(1, 9):
        Turn.objects.create(
            conversation=conversation,
            index=index,
            user_text=f"user message {index}",
            user_text_clean=f"user message {index}",
            assistant_text=LONG_REPLY,
        )
    return queue_create(
        name="Realism", kind="conversation", created_by=None, size=1, required_ratings=1, seed=1
    )


def test_rater_on_a_phone_reaches_questions_and_submit_at_once(phone_page):
    queue = _offline_conversation_queue()
    UserFactory(
        email="rater@example.org", username="rater@example.org", roles=[Role.EXPERT_REVIEWER]
    )
    page = phone_page
    sign_in(page, "rater@example.org", "correct-horse-battery")
    page.goto(f"/review/queues/{queue.pk}/rate/")
    transcript = page.get_by_test_id("rated-item")
    transcript.wait_for()
    # The offline label is on the transcript the rater reads.
    assert transcript.get_by_test_id("offline-badge").first.is_visible()
    assert "offline demo model" in transcript.inner_text()
    # Touch screen: no keyboard hints.
    assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
    assert not page.get_by_test_id("key-help").is_visible()
    assert not page.locator("kbd.key-hint").first.is_visible()
    screenshot(page, "rater-phone-transcript")

    page.get_by_test_id("show-questions").click()
    first_answer = page.locator("#rating-form label.btn").first
    box = first_answer.bounding_box()
    assert box is not None
    assert box["y"] < 844, "the first answer button is on the first screen"
    submit = page.get_by_test_id("submit-rating").bounding_box()
    assert submit is not None
    assert submit["y"] + submit["height"] <= 844
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "rater-phone-questions")
    for question in page.locator("#rating-form fieldset").all():
        question.locator("label.btn").first.click()
    page.get_by_test_id("submit-rating").click()
    page.get_by_test_id("queue-done").wait_for()


def test_the_scenario_list_updates_itself_when_generation_finishes(page):
    version = current_version(MetricFactory(name="Encourages reconnecting with people"))
    UserFactory(email="res@example.org", username="res@example.org", roles=[Role.RESEARCHER])
    sign_in(page, "res@example.org", "correct-horse-battery")
    page.goto(f"/evaluations/metric-versions/{version.pk}/scenarios/?generating={int(time.time())}")
    page.get_by_text("The scenario writer is at work").wait_for()
    assert page.get_by_test_id("scenario-table").locator("tbody tr").count() == 1  # empty row
    screenshot(page, "scenarios-generating")

    # The writer finishes in another thread, as a worker would; the page is not reloaded.
    writer = OfflineConfigurationFactory()
    worker = threading.Thread(
        target=lambda: scenarios_generate(metric_version=version, configuration=writer)
    )
    worker.start()
    worker.join(timeout=60)
    page.get_by_test_id("generation-finished").wait_for(timeout=20_000)
    assert page.get_by_test_id("scenario-table").locator("tbody tr").count() == 6
    screenshot(page, "scenarios-written")


def test_the_run_form_marks_metrics_outside_the_chosen_release(page):
    inside = MetricFactory()
    release = release_with("2.0.0", [inside])
    outsider = current_version(MetricFactory())
    UserFactory(
        email="maintainer@example.org", username="maintainer@example.org", roles=[Role.MAINTAINER]
    )
    sign_in(page, "maintainer@example.org", "correct-horse-battery")
    page.goto("/evaluations/runs/new/")
    outside_mark = page.locator(
        f"[data-metric-option]:has(input[value='{outsider.pk}']) [data-outside-release]"
    )
    inside_mark = page.locator(
        f"[data-metric-option]:has(input[value='{current_version(inside).pk}']) "
        "[data-outside-release]"
    )
    assert outside_mark.count() == inside_mark.count() == 1
    assert not outside_mark.is_visible()
    page.select_option("select[name=release]", str(release.pk))
    page.locator("[data-metric-group]").evaluate_all("groups => groups.forEach(g => g.open = true)")
    assert outside_mark.is_visible()
    assert not inside_mark.is_visible()
    page.select_option("select[name=release]", "")
    assert not outside_mark.is_visible()
    screenshot(page, "run-form-release-marks")
