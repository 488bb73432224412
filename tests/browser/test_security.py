"""In Chromium: the XSS corpus in every free-text field runs no script (escaping and
sanitising alone: the CSP is bypassed for this check), and with the CSP on, the site's own
pages raise no violation."""

import pytest

from core.roles import Role
from evaluations.models import Scenario
from metrics_registry.models import Release
from metrics_registry.services import release_publish
from submissions.models import Submission
from tests.browser.conftest import sign_in
from tests.evaluations.factories import ScenarioFactory, current_version
from tests.factories import UserFactory
from tests.llm.factories import ModelConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with
from tests.security.xss_corpus import CORPUS, PAYLOADS
from tests.submissions.factories import SubmissionFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-horse-battery"


@pytest.fixture
def hostile_world():
    """Every free-text field of submissions, metrics, releases, scenarios and model
    configurations holds the corpus (short fields: one payload each, spread over objects)."""
    owner = UserFactory(email="c@example.org", username="c@example.org", roles=[Role.CONTRIBUTOR])
    UserFactory(
        email="m@example.org",
        username="m@example.org",
        roles=[Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER],
    )
    long = {
        field: CORPUS
        for field in ("behavior", "context", "supportive_examples", "harmful_examples")
    }
    main = SubmissionFactory(
        contributor=owner,
        title=PAYLOADS[1][:160],
        justification=CORPUS,
        expertise=PAYLOADS[2][:300],
        credit_name=PAYLOADS[3][:160],
        review_note=CORPUS,
        **long,
    )
    for payload in PAYLOADS[:24]:
        SubmissionFactory(contributor=owner, title=payload[:160])
    metric = MetricFactory(
        name=PAYLOADS[5][:200],
        criterion=CORPUS,
        rubric_notes=CORPUS,
        credit_name=PAYLOADS[6][:160],
        source_reference=PAYLOADS[7][:200],
    )
    names = [MetricFactory(name=payload[:200]) for payload in PAYLOADS[8:30]]
    release = release_with("9.0.0", [metric, *names])
    Release.objects.filter(pk=release.pk).update(title=PAYLOADS[0][:200], notes=CORPUS)
    release = release_publish(Release.objects.get(pk=release.pk), published_by=UserFactory())
    scenario = ScenarioFactory(metric_version=current_version(metric))
    Scenario.objects.filter(pk=scenario.pk).update(
        situation=CORPUS,
        base_situation=CORPUS,
        user_goal=CORPUS,
        latent_adversarial_goal=CORPUS,
        failure_condition=CORPUS,
        persona={"name": PAYLOADS[9], "background": CORPUS},
        anchors=[{"turn": 1, "text": CORPUS}],
    )
    for payload in PAYLOADS[30:40]:
        ModelConfigurationFactory(name=payload[:100], description=CORPUS)
    return {"submission": main, "metric": metric, "release": release, "scenario": scenario}


def _pages(world) -> list[str]:
    submission, metric, scenario = world["submission"], world["metric"], world["scenario"]
    return [
        "/",
        "/registry/metrics/",
        f"/registry/metrics/{metric.key}/",
        "/registry/releases/",
        f"/registry/releases/{world['release'].version}/",
        "/submissions/",
        f"/submissions/{submission.pk}/",
        f"/evaluations/scenarios/{scenario.pk}/",
        f"/evaluations/scenarios/{scenario.pk}/edit/",
        f"/evaluations/metric-versions/{scenario.metric_version_id}/scenarios/",
        "/models/",
        "/admin/submissions/submission/",
        f"/admin/submissions/submission/{submission.pk}/change/",
        f"/admin/metrics_registry/metric/{metric.pk}/change/",
        "/api/metrics/",
        "/api/docs/",
    ]


def _visit(page, paths: list[str]) -> list[str]:
    seen = []
    for path in paths:
        response = page.goto(path)
        assert response.status < 500, (path, response.status)
        page.wait_for_load_state("load")
        page.wait_for_timeout(50)  # let onerror/onload handlers fire
        seen.append(path)
    return seen


def test_the_xss_corpus_runs_no_script_anywhere(browser, live_server, hostile_world):
    assert len(PAYLOADS) >= 100
    # The CSP would block inline handlers anyway; bypass it to test escaping itself.
    context = browser.new_context(base_url=live_server.url, bypass_csp=True)
    page = context.new_page()
    dialogs: list[str] = []
    page.on(
        "dialog", lambda dialog: (dialogs.append(f"{page.url}: {dialog.message}"), dialog.dismiss())
    )
    try:
        _visit(page, ["/registry/metrics/"])
        # The contributor's own pages, then a maintainer's view of everything.
        sign_in(page, "c@example.org", PASSWORD)
        own = f"/submissions/{hostile_world['submission'].pk}/"
        _visit(page, ["/submissions/", own, f"{own}edit/"])
        page.context.clear_cookies()
        sign_in(page, "m@example.org", PASSWORD)
        _visit(page, _pages(hostile_world))
        clickable = page.locator("#xss-click")
        assert clickable.count() == 0  # the element was escaped, not rendered
    finally:
        context.close()
    assert dialogs == []
    assert Submission.objects.count() == 25  # nothing was created by a script either


def test_the_sites_pages_raise_no_csp_violation(browser, live_server, hostile_world):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    try:
        sign_in(page, "m@example.org", PASSWORD)
        _visit(
            page, ["/dashboard/", "/roles/", "/submissions/new/", "/admin/", *_pages(hostile_world)]
        )
        page.goto("/api/docs/")
        page.wait_for_selector(".swagger-ui .info", timeout=15_000)  # Swagger UI started
    finally:
        context.close()
    assert violations == []
