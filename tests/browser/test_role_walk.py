"""A newcomer's walk through every role's pages on a phone, on the demo accounts and data.

Each page must fit a 390-px screen (tables scroll inside their own container) and answer
without a server error; a screenshot of each goes to var/screenshots/ for CI to keep.
"""

import threading

import pytest
from django.core.management import call_command

from core.demo import DEMO_PASSWORD
from core.roles import Role
from evaluations.models import Conversation, EvaluationRun, Judgment, RunStatus
from evaluations.services.processing import run_check_finished
from llm.models import ModelRole
from review.models import RatingQueue
from review.services import queue_create
from submissions.services import candidate_accept
from tests.browser.conftest import screenshot, sign_in
from tests.evaluations.factories import ConversationFactory, ScenarioFactory, current_version
from tests.factories import UserFactory
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with
from tests.review.test_evaluation_kinds import completed_conversation
from tests.rubrics.factories import RubricItemFactory
from tests.submissions.test_candidate_review import in_review  # noqa: F401 - fixture
from tests.submissions.test_drafting import offline_drafter  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="every role walks its pages in headless Chromium"),
]

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
    # No worker has stored the run's figures yet: the page says so instead of linking to them.
    assert public.get_by_test_id("run-figures-pending").is_visible()
    assert public.get_by_role("link", name="Results (Explore)").count() == 0
    assert public.get_by_role("link", name="Conversations").is_visible()
    assert public.get_by_role("button", name="Make official (public)").is_visible()
    screenshot(page, "walk-maintainer-run-completed-live")


def test_maintainer_meets_a_release_run_that_refuses_an_outsider_and_a_draft_naming_its_gaps(
    page,
):
    inside = MetricFactory(name="Inside the release", status="validated")
    outsider = MetricFactory(name="Outside the release", status="validated")
    waiting = MetricFactory(name="Accepted but still waiting", status="under_review")
    release_with("2.0.0", [inside])
    target = OfflineConfigurationFactory(name="Target model")
    ModelRoleAssignmentFactory(role=ModelRole.TARGET, configuration=target)
    for role, name in ((ModelRole.USER_SIMULATOR, "Simulator"), (ModelRole.JUDGE, "Judge")):
        ModelRoleAssignmentFactory(role=role, configuration=OfflineConfigurationFactory(name=name))
    _signed_in(page, Role.MAINTAINER)

    page.goto("/evaluations/runs/new/")
    judge_groups = page.locator("select[name=judge] optgroup")
    assert judge_groups.first.get_attribute("label") == "Judge role"
    assert judge_groups.nth(1).get_attribute("label") == "Other configurations"
    page.locator("#id_name").fill("Release 2.0.0 with an extra metric")
    page.locator("#id_release").select_option(label="2.0.0 — Release 2.0.0")
    page.locator("[data-metric-group] summary").first.click()
    page.get_by_label(f"{inside.key} · Inside the release").check()
    page.get_by_label(f"{outsider.key} · Outside the release").check()
    page.get_by_label("Target model").check()
    page.get_by_role("button", name="Create and show the plan").click()
    refusal = page.get_by_text(f"Release 2.0.0 does not contain {outsider.key} v1")
    refusal.wait_for()
    assert refusal.is_visible()
    assert not EvaluationRun.objects.exists()
    screenshot(page, "walk-maintainer-release-run-refused")

    page.goto("/registry/releases/2.0.0/edit/")
    page.get_by_role("button", name="Add all validated current versions").click()
    left_out = page.get_by_test_id("release-left-out")
    left_out.wait_for()
    assert waiting.key in left_out.inner_text()
    assert "Under review: not validated yet" in left_out.inner_text()
    assert outsider.key not in left_out.inner_text()  # validated: it was added
    screenshot(page, "walk-maintainer-release-left-out")


def test_researcher_rejects_once_accepts_and_validates_and_reads_queue_strata(
    page,
    in_review,  # noqa: F811
):
    first, second = in_review.candidates.order_by("position")[:2]
    _signed_in(page, Role.RESEARCHER)
    page.goto(f"/submissions/candidates/{second.pk}/")
    page.get_by_role("button", name="Reject").click()
    page.get_by_text("Please give a reason for rejecting this candidate.").wait_for()
    assert page.get_by_text("Please give a reason for rejecting this candidate.").count() == 1

    page.goto(f"/submissions/candidates/{first.pk}/")
    page.get_by_label("Partly faithful").check()
    page.get_by_label("Validate the metric as I accept it").check()
    page.get_by_role("button", name="Accept as metric").click()
    page.wait_for_url("**/submissions/candidates/")
    first.refresh_from_db()
    assert first.metric.validation_status == "validated"
    assert "validated: “Add all validated current versions” includes it" in page.content()

    queue = queue_create(
        name="Fidelity", kind="metric", created_by=None, size=1, strata=["age_context", "model"]
    )
    page.goto(f"/review/manage/{queue.pk}/")
    assert page.get_by_test_id("queue-strata").inner_text() == "age context, model"
    screenshot(page, "walk-researcher-queue-strata")


def test_rater_screens_show_what_their_questions_refer_to(
    page,
    in_review,  # noqa: F811
):
    candidate = in_review.candidates.order_by("position").first()
    candidate_accept(candidate=candidate, actor=None, validate=True)
    candidate.refresh_from_db()
    metric = candidate.metric
    conversation = completed_conversation(
        verdict=True, scenario=ScenarioFactory(metric_version=current_version(metric))
    )
    Judgment.objects.filter(conversation=conversation).update(
        evidence=[{"turn": 2, "quote": "answers 2", "found_in_transcript": True}]
    )
    RubricItemFactory(acuity="emergency", population="adult", language="en")
    rater = "rater@example.org"
    UserFactory(email=rater, username=rater, roles=[Role.EXPERT_REVIEWER])
    queues = {
        kind: queue_create(name=kind, kind=kind, created_by=None, size=1, required_ratings=3)
        for kind in ("metric", "judge_verdict", "external_panel", "rubric_criterion")
    }
    sign_in(page, rater, "correct-horse-battery")

    def open_queue(kind):
        page.goto(f"/review/queues/{queues[kind].pk}/rate/")
        page.get_by_test_id("rated-item").wait_for()
        assert conversation.target.name not in page.content()
        assert conversation.run.judge.name not in page.content()

    open_queue("metric")
    source = page.get_by_test_id("source-submission")
    assert source.is_visible()
    assert in_review.behavior in source.inner_text()
    assert in_review.justification in source.inner_text()
    screenshot(page, "walk-rater-metric-source")

    open_queue("external_panel")
    examples = page.get_by_test_id("metric-examples")
    assert examples.is_visible()
    assert "Here is a complete 1,000-word essay you can hand in." in examples.inner_text()
    assert page.get_by_test_id("judge-verdict").count() == 0
    screenshot(page, "walk-rater-external-panel-examples")

    open_queue("judge_verdict")
    evidence = page.get_by_test_id("transcript").locator("mark")
    assert evidence.count() == 1
    assert evidence.inner_text() == "answers 2"
    assert evidence.is_visible()
    assert "turn 2: “answers 2”" in page.get_by_test_id("judge-verdict").inner_text()
    screenshot(page, "walk-rater-judge-evidence")

    open_queue("rubric_criterion")
    context = page.get_by_test_id("rubric-item-context").inner_text()
    assert context == "Urgency: emergency · Person writing: adult · Language: English"
    screenshot(page, "walk-rater-rubric-words")


def test_contributor_sees_what_submit_needs_before_trying(page):
    _signed_in(page, Role.CONTRIBUTOR)
    page.goto("/submissions/new/")
    for label in ("When does this come up?", "Why does it matter?"):
        text = page.locator("label", has_text=label).inner_text()
        assert text.strip().endswith("*"), text
    rule = page.get_by_test_id("examples-rule")
    assert rule.is_visible()
    assert "at least one of the two examples" in rule.inner_text()
    rule_box = rule.bounding_box()
    field_box = page.get_by_label("What would a supportive reply look like?").bounding_box()
    assert rule_box is not None
    assert field_box is not None
    assert 0 <= field_box["y"] - rule_box["y"] < 150, "the rule stands just above the examples"
    screenshot(page, "walk-contributor-needed-fields")


def test_maintainer_opens_an_unofficial_runs_results_from_its_run_page(page, browser, live_server):
    """The run page's "Results (Explore)" works for a run no visitor may see: the maintainer
    reads it marked "not public", a signed-out visitor gets a 404."""
    from tests.results.public_data import published_run

    run = published_run(version="3.0.0", official=False, names=("Offline unofficial",))
    EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    _signed_in(page, Role.MAINTAINER)
    page.goto(f"/evaluations/runs/{run.pk}/")
    page.get_by_test_id("run-public").get_by_role("link", name="Results (Explore)").click()
    page.wait_for_load_state()
    assert f"run={run.pk}" in page.url
    assert page.get_by_test_id("private-badge").is_visible()
    assert f"run {run.name}" in page.get_by_test_id("run-banner").inner_text()
    screenshot(page, "walk-maintainer-unofficial-results")
    visitor = browser.new_context(base_url=live_server.url)
    try:
        response = visitor.new_page().goto(f"/explore/?run={run.pk}")
        assert response.status == 404
    finally:
        visitor.close()
