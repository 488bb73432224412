"""In Chromium: the XSS corpus, planted in every user-written text field
(`tests/security/xss_fields.COVERED`, through the platform's forms and services), runs no
script and injects no markup on any page that shows it, for any role; and with the CSP on,
no page raises a violation (so no payload is merely being blocked by the policy either).

Two passes over the same pages: one with the CSP bypassed (escaping and sanitising alone must
hold), one with it on (every `securitypolicyviolation` event and console report is collected).
Many payloads share each page, so the whole walk stays around a minute.
"""

import pytest
from django.contrib import admin
from django.urls import reverse

from core.roles import Role
from evaluations.models import Conversation, RubricResponse, Scenario
from llm.models import ModelConfiguration
from metrics_registry.models import Metric
from review.models import RatingQueue
from rubrics.models import RubricItem
from submissions.models import Enquiry, Submission
from tests.browser.conftest import sign_in
from tests.factories import UserFactory
from tests.security import xss_fields, xss_world
from tests.security.xss_corpus import PAYLOADS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow(reason="renders every page with the XSS corpus in headless Chromium"),
]
PLATFORM_APPS = {
    "core",
    "llm",
    "metrics_registry",
    "evaluations",
    "rubrics",
    "review",
    "submissions",
    "results",
}

# What a payload would leave behind if it were rendered as markup rather than text.
INJECTED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const n = a.name.toLowerCase();
      const v = a.value.trim();
      if (n.startsWith('on') || n.startsWith('hx-on') || n === 'srcdoc' || n === 'formaction'
          || (['href', 'src', 'action', 'data'].includes(n) && /^(javascript|vbscript):/i.test(v))
          || (['href', 'src', 'data'].includes(n) && /^data:text\\/html/i.test(v))) {
        bad.push(`${el.tagName} ${n}=${v.slice(0, 60)}`);
      }
    }
  }
  for (const el of document.querySelectorAll('b, x, marquee, base, meta[http-equiv]')) {
    if (el.textContent === '__xss' || el.id === 'xss-click' || el.tagName !== 'B') {
      bad.push(`element ${el.tagName}`);
    }
  }
  if (window.__xss) bad.push('window.__xss set by a payload');
  return bad;
}"""
# Whether the page shows planted text at all (escaped markup still carries these).
SHOWS_PAYLOAD = """() => ['lert(1)', 'alert&amp;#40;', '__xss', 'base64,'].some(
  (m) => document.documentElement.outerHTML.includes(m))"""
# Pages that show no user-written text by design; every other page must show some payload,
# or the walk would prove nothing about it.
NO_USER_TEXT = {
    "/contact/",
    "/api/docs/",
    "/dashboard/",
    "/roles/",
    "/evaluations/rubric-items/import/",
    "/admin/",
    "/admin/core/rolechange/",
    "/admin/metrics_registry/metricstatuschange/",
    "/admin/review/assignment/",
    "/admin/review/rating/",
    "/admin/review/contestedmetrickeep/",
}
CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  `${e.violatedDirective} ${e.blockedURI} ${(e.sample || '').slice(0, 60)}`));
"""


@pytest.fixture
def hostile_world():
    return xss_world.build()


def _public_pages(w) -> list[str]:
    run = w.objects["run"]
    conversations = Conversation.objects.filter(run=run).order_by("pk")
    targets = w.objects["targets"]
    pages = [
        "/",
        reverse("metrics_registry:taxonomy"),
        reverse("metrics_registry:metric_list"),
        reverse("metrics_registry:release_list"),
        reverse("metrics_registry:release_detail", args=["9.0.0"]),
        reverse("results:methodology"),
        reverse("results:explore"),
        reverse("results:metric-list"),
        f"{reverse('results:label-compare')}?a={targets[0].pk}&b={targets[1].pk}",
        reverse("contact:form"),
        reverse("api-docs"),
    ]
    for metric in Metric.objects.all():
        pages += [
            reverse("metrics_registry:metric_detail", args=[metric.key]),
            reverse("results:metric", args=[metric.key]),
        ]
    pages += [reverse("results:conversation", args=[c.pk]) for c in conversations[:2]]
    pages += [reverse("results:label", args=[t.pk]) for t in targets]
    pages += [
        f"{reverse('results:rubrics')}?run={run.pk}",
        f"{reverse('results:rubric-items')}?run={run.pk}",
        f"{reverse('results:rubric-items')}?run={run.pk}&dimension=context_seeking",
        f"{reverse('results:rubric-priorities')}?run={run.pk}",
    ]
    pages += [
        reverse("results:rubric-response", args=[r.pk])
        for r in RubricResponse.objects.filter(run=run).order_by("pk")[:3]
    ]
    return pages


def _contributor_pages(w) -> list[str]:
    pages = [reverse("core:dashboard"), reverse("submissions:list")]
    for submission in Submission.objects.filter(contributor=w.users["contributor"])[:3]:
        pages.append(reverse("submissions:detail", args=[submission.pk]))
    pages.append(reverse("submissions:edit", args=[w.objects["submission"].pk]))
    return pages


def _expert_pages(w) -> list[str]:
    return [reverse("review:rater-queues")] + [
        reverse("review:rate", args=[q.pk]) for q in RatingQueue.objects.order_by("pk")
    ]


def _maintainer_pages(w) -> list[str]:
    run = w.objects["run"]
    conversation = run.conversations.order_by("pk").first()
    imported = w.objects["imported_run"]
    imported_conversation = imported.conversations.order_by("pk").first()
    scenario = Scenario.objects.filter(status="active").order_by("pk").first()
    pages = [
        reverse("core:dashboard"),
        reverse("core:roles"),
        reverse("submissions:detail", args=[w.objects["submission"].pk]),
        reverse("submissions:candidate-list"),
        reverse("submissions:candidate-review", args=[w.objects["candidate"].pk]),
        reverse("submissions:enquiry-list"),
        reverse("submissions:enquiry-list") + "?status=",
        reverse("review:queue-list"),
        reverse("review:priorities"),
        reverse("review:contested"),
        reverse("llm:configuration-list"),
        reverse("llm:call-list"),
        reverse("evaluations:scenario-index"),
        reverse("evaluations:scenario-detail", args=[scenario.pk]),
        reverse("evaluations:scenario-edit", args=[scenario.pk]),
        reverse("evaluations:metric-scenarios", args=[scenario.metric_version_id]),
        reverse("evaluations:run-list"),
        reverse("evaluations:run-detail", args=[run.pk]),
        reverse("evaluations:conversation-detail", args=[run.pk, conversation.pk]),
        reverse("results:run-conversations", args=[run.pk]),
        # A run of imported transcripts: the file's name, ids, system prompt and messages.
        reverse("evaluations:run-detail", args=[imported.pk]),
        reverse("evaluations:conversation-detail", args=[imported.pk, imported_conversation.pk]),
        reverse("evaluations:transcript-import"),
        reverse("evaluations:release-demographics", args=[w.objects["release"].pk]),
        reverse("rubrics:rubric-import"),
        "/admin/",
    ]
    pages += [reverse("submissions:enquiry-detail", args=[e.pk]) for e in Enquiry.objects.all()]
    pages += [reverse("review:queue-detail", args=[q.pk]) for q in RatingQueue.objects.all()]
    pages += [
        reverse("llm:configuration-update", args=[c.pk])
        for c in ModelConfiguration.objects.filter(pk__in=[t.pk for t in w.objects["targets"]])
    ]
    # The admin: every platform model's change list, and the change page of one row of each.
    for model in admin.site._registry:
        meta = model._meta
        if meta.app_label not in PLATFORM_APPS:
            continue
        pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        row = _hostile_row(model)
        if row is not None:
            pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk]))
    return pages


def _hostile_row(model):
    """A row of `model` that holds a payload (the newest row when none does)."""
    rows = list(model._default_manager.order_by("-pk")[:300])
    for row in rows:
        if any(
            xss_fields.holds_payload(getattr(row, f.name))
            for f in xss_fields.text_fields(model)
            if getattr(row, f.name)
        ):
            return row
    return rows[0] if rows else None


def _walk(browser, base_url: str, w, *, bypass_csp: bool) -> dict[str, list[str]]:
    """Visit every page as each role; what each page ran, injected or had blocked."""
    found: dict[str, list[str]] = {}
    context = browser.new_context(base_url=base_url, bypass_csp=bypass_csp)
    context.set_default_navigation_timeout(45_000)
    context.add_init_script(CSP_LISTENER)
    page = context.new_page()
    page.on(
        "dialog",
        lambda d: (found.setdefault(page.url, []).append(f"dialog {d.message}"), d.dismiss()),
    )
    page.on(
        "console",
        lambda m: (
            found.setdefault(page.url, []).append(m.text)
            if "Content Security Policy" in m.text
            else None
        ),
    )
    roles = [
        (None, _public_pages(w)),
        ("c@example.org", _contributor_pages(w)),
        ("e@example.org", _expert_pages(w)),
        ("m@example.org", _maintainer_pages(w)),
    ]
    visited, blank = 0, []
    try:
        for email, paths in roles:
            context.clear_cookies()
            if email:
                sign_in(page, email, xss_world.PASSWORD)
            for path in paths:
                response = page.goto(path)
                assert response.status < 400, (email, path, response.status)
                page.wait_for_timeout(30)  # let onerror/onload handlers fire
                problems = page.evaluate(INJECTED) if bypass_csp else []
                problems += page.evaluate("window.__csp || []")
                if not page.evaluate(SHOWS_PAYLOAD):
                    blank.append(path)
                if problems:
                    found.setdefault(f"{email or 'anonymous'} {path}", []).extend(problems)
                visited += 1
    finally:
        context.close()
    found["_visited"] = [str(visited)]
    found["_blank"] = blank
    return found


def test_the_xss_corpus_runs_no_script_and_injects_no_markup_anywhere(
    browser, live_server, hostile_world
):
    assert len(PAYLOADS) >= 100
    submissions_before = Submission.objects.count()
    # Escaping alone: the CSP would block inline handlers anyway, so it is bypassed here.
    found = _walk(browser, live_server.url, hostile_world, bypass_csp=True)
    visited = int(found.pop("_visited")[0])
    assert visited >= 70
    assert sorted(set(found.pop("_blank")) - NO_USER_TEXT) == []
    assert found == {}
    # With the CSP on: not one violation, so no payload is merely being blocked by it.
    found = _walk(browser, live_server.url, hostile_world, bypass_csp=False)
    del found["_visited"], found["_blank"]
    assert found == {}
    # Nothing was created by a script either.
    assert Submission.objects.count() == submissions_before
    assert RubricItem.objects.count() == 2


def test_the_sites_own_pages_raise_no_csp_violation(browser, live_server):
    UserFactory(
        email="m@example.org",
        username="m@example.org",
        roles=[Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER],
    )
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
        sign_in(page, "m@example.org", xss_world.PASSWORD)
        for name in (
            "submissions:create",
            "review:queue-create",
            "llm:configuration-create",
            "evaluations:run-create",
            "metrics_registry:release_create",
        ):
            page.goto(reverse(name))
        page.goto("/api/docs/")
        page.wait_for_selector(".swagger-ui .info", timeout=15_000)  # Swagger UI started
    finally:
        context.close()
    assert violations == []
