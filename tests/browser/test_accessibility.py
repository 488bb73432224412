"""axe-core's WCAG 2.2 A and AA rules on every public page and every workspace page (signed
in as a maintainer, then as an expert reviewer): no violation allowed.

axe-core comes from the test environment (the axe-playwright-python package pins it), never
from the site.
"""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from core.demo import DEMO_PASSWORD
from evaluations.models import Conversation, Scenario
from evaluations.services.swap import swap_study_create
from llm.models import ModelConfiguration
from metrics_registry.models import LabelCategory, Metric, Subarea
from review.models import RatingQueue
from submissions.models import Enquiry, EnquiryKind, MetricCandidate
from tests.browser.conftest import sign_in
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import release_with
from tests.results.public_data import published_run
from tests.submissions.factories import SubmissionFactory

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(
        reason="runs axe-core in headless Chromium on every public and workspace page"
    ),
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


def _violations(page, axe, paths: list[str]) -> dict:
    found = {}
    for path in paths:
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
    return found


@pytest.mark.parametrize("width", [1366, 390])
def test_every_public_page_passes_axe_wcag_22_aa(browser, live_server, width):
    from axe_playwright_python.sync_playwright import Axe  # a test-only dependency

    run = published_run(n_metrics=4)
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": 900}
    )
    found = _violations(context.new_page(), Axe(), _public_paths(run))
    context.close()
    assert not found, json.dumps(found, indent=1)


def _workspace_paths() -> dict[str, list[str]]:
    """The pages each demo account works on, over the demo seed, a published run with a swap
    study re-judging it (its run page carries the swap banner) and a draft release."""
    run = published_run(n_metrics=4, version="2.0.0")
    judge = OfflineConfigurationFactory(
        name="Strict judge", extra_params={"offline_profile": "strict"}
    )
    swap = swap_study_create(base_run=run, judge=judge, sample_size=4, seed=3).swap_run_id
    draft = release_with("2.1.0", list(Metric.objects.order_by("pk")[:3]))
    scenario = Scenario.objects.order_by("pk").first()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    metric = Metric.objects.order_by("pk").first()
    queues = [queue.pk for queue in RatingQueue.objects.order_by("pk")]
    configuration = ModelConfiguration.objects.order_by("pk").first()
    submission = SubmissionFactory(
        contributor=get_user_model().objects.get(email="maintainer@demo.impactbench.org")
    )
    # A drafted candidate awaiting review, with its rationale and a subarea.
    candidate = MetricCandidate.objects.create(
        submission=submission,
        short_name="Suggests talking to a trusted adult",
        criterion="The assistant suggests the teen talks to a trusted adult about the worry.",
        polarity="positive",
        label_category=LabelCategory.objects.order_by("pk").first(),
        rationale="Named by the contributor as what a counsellor would do.",
        drafted_offline=True,
    )
    candidate.subareas.add(Subarea.objects.order_by("pk").first())
    enquiry = Enquiry.objects.create(
        kind=EnquiryKind.BENCHMARK,
        name="A researcher",
        email="someone@example.org",
        message="A benchmark of replies to people in crisis.",
        benchmark_url="https://example.org/benchmark",
        client_hash="0" * 64,
    )
    maintainer = [
        "/dashboard/",
        "/submissions/",
        "/submissions/new/",
        f"/submissions/{submission.pk}/",
        f"/submissions/enquiries/{enquiry.pk}/",
        "/submissions/candidates/",
        f"/submissions/candidates/{candidate.pk}/",
        "/submissions/enquiries/",
        "/registry/metrics/",
        f"/registry/metrics/{metric.key}/",
        "/registry/metrics/import/",
        "/registry/metrics/needs-mapping/",
        "/registry/releases/new/",
        f"/registry/releases/{draft.version}/edit/",
        "/review/manage/",
        "/review/manage/new/",
        "/review/manage/new/run/",
        *(f"/review/manage/{pk}/" for pk in queues),
        "/review/priorities/",
        "/review/contested/",
        "/evaluations/scenarios/",
        f"/evaluations/scenarios/{scenario.pk}/",
        f"/evaluations/scenarios/{scenario.pk}/edit/",
        f"/evaluations/metric-versions/{scenario.metric_version_id}/scenarios/",
        "/evaluations/runs/",
        "/evaluations/runs/new/",
        f"/evaluations/runs/{run.pk}/",
        f"/evaluations/runs/{swap}/",
        f"/evaluations/runs/compare/?a={run.pk}&b={swap}",
        f"/evaluations/runs/{run.pk}/swap/",
        f"/evaluations/runs/{run.pk}/conversations/",
        f"/evaluations/runs/{run.pk}/conversations/{conversation.pk}/",
        f"/evaluations/releases/{run.release_id}/demographics/",
        "/evaluations/rubric-regressions/",
        "/evaluations/rubric-items/import/",
        "/models/",
        "/models/new/",
        f"/models/{configuration.pk}/edit/",
        "/models/calls/",
        "/roles/",
        f"/results/releases/{run.release.version}/expert-figures/",
        f"/results/releases/{run.release.version}/expert-figures/metrics/",
    ]
    metric_queue = RatingQueue.objects.get(kind="metric").pk
    reviewer = ["/dashboard/", "/review/", f"/review/queues/{metric_queue}/rate/"]
    return {
        "maintainer@demo.impactbench.org": maintainer,
        "reviewer@demo.impactbench.org": reviewer,
    }


def test_every_workspace_page_passes_axe_wcag_22_aa(browser, live_server):
    """Both widths in one test, so the demo seed is built once."""
    from axe_playwright_python.sync_playwright import Axe

    call_command("seed_demo", verbosity=0)
    pages = _workspace_paths()
    axe = Axe()
    found = {}
    for width in (1366, 390):
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": width, "height": 900}
        )
        page = context.new_page()
        for account, paths in pages.items():
            context.clear_cookies()
            sign_in(page, account, DEMO_PASSWORD)
            for path, violations in _violations(page, axe, paths).items():
                found[f"{width} px, {account.split('@')[0]}: {path}"] = violations
        context.close()
    assert not found, json.dumps(found, indent=1)
