"""A newcomer's walk through every role's pages on a phone, on the demo accounts and data.

Each page must fit a 390-px screen (tables scroll inside their own container) and answer
without a server error; a screenshot of each goes to var/screenshots/ for CI to keep.
"""

import pytest
from django.core.management import call_command

from core.demo import DEMO_PASSWORD
from review.models import RatingQueue
from tests.browser.conftest import screenshot, sign_in

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
