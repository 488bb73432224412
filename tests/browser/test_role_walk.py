"""A newcomer's walk through every role's pages on a phone, on the demo accounts and data.

Each page must fit a 390-px screen (tables scroll inside their own container) and answer
without a server error; a screenshot of each goes to var/screenshots/ for CI to keep.
"""

import threading

import pytest
from django.core.management import call_command

from core.demo import DEMO_PASSWORD
from core.roles import Role
from evaluations.models import Conversation, EvaluationRun, RunStatus
from evaluations.services.processing import run_check_finished
from review.models import RatingQueue
from tests.browser.conftest import screenshot, sign_in
from tests.evaluations.factories import ConversationFactory
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WALK: dict[str | None, list[str]] = {
    None: [
        "/",
        "/contact/?kind=benchmark",
        "/registry/metrics/",
        "/results/methodology/",
        "/no-such-page/",
        "/api/docs/",
    ],
    "contributor@demo.impactbench.org": [
        "/dashboard/",
        "/submissions/new/",
        "/submissions/candidates/",
    ],
    "researcher@demo.impactbench.org": [
        "/submissions/candidates/",
        "/submissions/enquiries/",
        "/evaluations/scenarios/",
        "/review/",
    ],
    "maintainer@demo.impactbench.org": ["/evaluations/runs/new/", "/registry/releases/1.0.0/edit/"],
    "reviewer@demo.impactbench.org": ["/review/rate/"],
}


def fits_the_screen(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_every_role_walks_its_pages_on_a_phone(phone_page, live_server):
    call_command("seed_demo", verbosity=0)
    metric_queue = RatingQueue.objects.get(kind="metric")
    page = phone_page
    for account, paths in WALK.items():
        if account:
            page.context.clear_cookies()
            sign_in(page, account, DEMO_PASSWORD)
        for path in paths:
            if path == "/review/rate/":
                path = f"/review/queues/{metric_queue.pk}/rate/"
            response = page.goto(path)
            assert response is not None
            assert response.status < 500, path
            name = (account or "public").split("@")[0] + path.replace("/", "_").rstrip("_")
            screenshot(page, f"walk-{name}"[:80])
            if path != "/api/docs/":  # Swagger UI lays itself out
                assert fits_the_screen(page), f"{path} is wider than the phone"
            assert "URLconf" not in page.content(), path


def _signed_in(page, *roles: str) -> None:
    email = f"{'-'.join(roles).lower().replace(' ', '')}@example.org"
    UserFactory(email=email, username=email, roles=list(roles))
    sign_in(page, email, "correct-horse-battery")


def test_maintainer_sees_the_live_run_page_change_its_controls_at_completion(page):
    conversation = ConversationFactory(status="pending")
    run = conversation.run
    EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, conversations_total=1)
    _signed_in(page, Role.MAINTAINER)
    page.goto(f"/evaluations/runs/{run.pk}/")
    controls = page.get_by_test_id("run-controls")
    for name in ("Resume", "Pause", "Cancel"):
        assert controls.get_by_role("button", name=name).is_visible()
    assert page.get_by_test_id("run-public").count() == 0

    # The last conversation finishes in another thread, as a worker would; no reload here.
    def finish():
        Conversation.objects.filter(pk=conversation.pk).update(status="completed")
        run_check_finished(run_id=run.pk)

    worker = threading.Thread(target=finish)
    worker.start()
    worker.join(timeout=60)
    page.locator("[data-testid=run-live][data-run-status=completed]").wait_for(timeout=20_000)
    assert page.get_by_test_id("run-controls").count() == 0
    for name in ("Resume", "Pause", "Cancel"):
        assert page.get_by_role("button", name=name).count() == 0
    public = page.get_by_test_id("run-public")
    assert public.get_by_role("link", name="Results (Explore)").is_visible()
    assert public.get_by_role("link", name="Conversations").is_visible()
    assert public.get_by_role("button", name="Make official (public)").is_visible()
    screenshot(page, "walk-maintainer-run-completed-live")
