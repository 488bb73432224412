"""axe-core's WCAG 2.2 A and AA rules on every public page: no violation allowed.

axe-core comes from the test environment (the axe-playwright-python package pins it), never
from the site.
"""

import json

import pytest

from evaluations.models import Conversation
from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="runs axe-core in headless Chromium on every public page"),
]

WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def _public_paths(run) -> list[str]:
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    metric = conversation.scenario.metric_version.metric
    category = conversation.scenario.metric_version.label_category
    a, b = run.targets.order_by("name")[:2]
    return [
        "/",
        "/explore/",
        "/explore/?subarea=agency-purpose",
        f"/explore/?model={a.pk}&compare={b.pk}",
        "/metrics/",
        f"/metrics/{metric.key}/",
        f"/conversations/{conversation.pk}/",
        f"/label/{a.pk}/",
        f"/label/{a.pk}/?age=teen",
        f"/label/{a.pk}/category/{category.slug}/",
        f"/label/compare/?a={a.pk}&b={b.pk}",
        "/label/",
        f"/label/{a.pk}/for/parent/",
        f"/label/{a.pk}/for/educator/",
        "/results/methodology/",
        "/registry/releases/",
        f"/registry/releases/{run.release.version}/",
        "/registry/taxonomy/",
    ]


@pytest.mark.parametrize("width", [1366, 390])
def test_every_public_page_passes_axe_wcag_22_aa(browser, live_server, width):
    from axe_playwright_python.sync_playwright import Axe  # a test-only dependency

    run = published_run(n_metrics=4)
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    axe = Axe()
    found = {}
    for path in _public_paths(run):
        response = page.goto(path)
        assert response.status == 200, path
        results = axe.run(
            page,
            options={
                "runOnly": {"type": "tag", "values": WCAG_22_AA},
                "resultTypes": ["violations"],
            },
        )
        violations = results.response["violations"]
        if violations:
            found[path] = [
                (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations
            ]
    context.close()
    assert not found, json.dumps(found, indent=1)
