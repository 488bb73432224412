"""Three raters in three browsers work one rating queue to completion."""

import pytest

from core.roles import Role
from review.models import QueueItem, Rating, RatingDraft
from review.services import queue_create
from tests.browser.conftest import sign_in
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="three raters work a queue in headless Chromium"),
]


def new_page(browser, live_server, **options):
    context = browser.new_context(base_url=live_server.url, **options)
    context.set_default_timeout(30_000)
    context.set_default_navigation_timeout(45_000)
    return context, context.new_page()


def test_three_raters_complete_a_queue_without_over_rating(browser, live_server):
    for n in range(4):
        MetricFactory(name=f"Suggests a step the user takes {n}", status="validated")
    queue = queue_create(
        name="Fidelity sample", kind="metric", created_by=None, size=4, required_ratings=3, seed=5
    )
    contexts, pages = [], []
    for n in range(3):
        email = f"rater{n}@example.org"
        UserFactory(email=email, username=email, roles=[Role.EXPERT_REVIEWER])
        # The third rater works on a phone.
        options = {"viewport": {"width": 390, "height": 844}, "is_mobile": True} if n == 2 else {}
        context, page = new_page(browser, live_server, **options)
        contexts.append(context)
        pages.append(page)
        sign_in(page, email, "correct-horse-battery")
        page.goto(f"/review/queues/{queue.pk}/rate/")
    try:
        # Autosave: a choice made by keyboard is saved as a draft and survives a reload.
        first = pages[0]
        first.get_by_test_id("rated-item").wait_for()
        first.keyboard.press("2")
        first.locator("#draft-status", has_text="Draft saved").wait_for()
        assert RatingDraft.objects.get().answers == {"fidelity": "partly"}
        first.reload()
        assert first.locator("input[value=partly]").is_checked()

        finished = [False, False, False]
        rounds = 0
        while not all(finished):
            rounds += 1
            assert rounds < 20, "the queue should be done in 4 rounds per rater"
            for n, page in enumerate(pages):
                if finished[n]:
                    continue
                if page.get_by_test_id("queue-done").count():
                    finished[n] = True
                    continue
                page.get_by_test_id("rated-item").wait_for()
                if n == 0:
                    # Keyboard only: 1 = faithful, Enter submits.
                    page.keyboard.press("1")
                    page.keyboard.press("Enter")
                else:
                    switch = page.get_by_test_id("show-questions")
                    if switch.is_visible():  # the phone shows the item first, questions on tap
                        switch.click()
                    page.get_by_text("Partly faithful").click()
                    page.get_by_test_id("submit-rating").click()
                page.wait_for_load_state()
        for page in pages:
            assert page.get_by_test_id("done-count").inner_text() == "4"
    finally:
        for context in contexts:
            context.close()

    assert Rating.objects.current().count() == 12
    for item in QueueItem.objects.filter(queue=queue):
        assert (item.ratings_done, item.claims_open) == (3, 0)
        assert item.ratings.values("rater").distinct().count() == 3
    keyboard_rater = Rating.objects.filter(rater__email="rater0@example.org")
    assert {r.answers["fidelity"] for r in keyboard_rater} == {"faithful"}
