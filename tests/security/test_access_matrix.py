"""Every URL pattern × every kind of visitor against the intended permission.

The table RULES below is the access policy of the site, one row per named URL pattern: which
visitors may use it. The test walks `get_resolver()`, so a new view without a row fails
`test_every_url_pattern_has_a_rule`. Admin pages follow one rule per app (ADMIN_APP_RULES).

To add a page: add its URL name to RULES with a policy (a set of visitors below) and, if its
URL takes arguments, a function building them from the `world` objects (KWARGS).
"""

import re

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from core.roles import Role
from metrics_registry.models import LabelCategory
from review.services import assignment_claim
from submissions.models import Enquiry, EnquiryKind, MetricCandidate
from tests.evaluations.factories import ConversationFactory, ScenarioFactory
from tests.factories import UserFactory
from tests.llm.factories import ModelConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with
from tests.results.public_data import add_rubric_responses, published_run
from tests.review.factories import metric_queue
from tests.submissions.factories import SubmissionFactory

pytestmark = pytest.mark.django_db

# --- Who visits --------------------------------------------------------------------------------
ANON, CONTRIB, OTHER, EXPERT, RESEARCHER, MAINTAINER, STAFF = (
    "anonymous", "contributor", "other contributor", "expert reviewer", "researcher",
    "maintainer", "staff",
)  # fmt: skip
VISITORS = (ANON, CONTRIB, OTHER, EXPERT, RESEARCHER, MAINTAINER, STAFF)

# --- Policies: the visitors allowed ------------------------------------------------------------
EVERYONE = frozenset(VISITORS)
SIGNED_IN = EVERYONE - {ANON}
# Anyone holding a platform role that submits (every fixture role includes Contributor).
SUBMITTERS = frozenset({CONTRIB, OTHER, EXPERT, RESEARCHER, MAINTAINER})
OWNER = frozenset({CONTRIB})  # the world's submission belongs to CONTRIB
OWNER_AND_CURATORS = frozenset({CONTRIB, RESEARCHER, MAINTAINER})
CURATORS = frozenset({RESEARCHER, MAINTAINER})
VIEWERS = frozenset({RESEARCHER, MAINTAINER, EXPERT})
RATERS = frozenset({EXPERT})
MAINTAINERS = frozenset({MAINTAINER})
LOG_READERS = frozenset({RESEARCHER, MAINTAINER})
NOBODY = frozenset()

# url name: (policy, kwargs builder or None)
RULES = {
    # core
    "core:home": (EVERYONE, None),
    "core:dashboard": (SIGNED_IN, None),
    "core:languages": (SIGNED_IN, None),
    "core:health": (EVERYONE, None),
    "core:roles": (MAINTAINERS, None),
    # demo
    "demo:progress": (EVERYONE, None),
    # registry (public reading; drafts only for maintainers)
    "metrics_registry:taxonomy": (EVERYONE, None),
    "metrics_registry:metric_list": (EVERYONE, None),
    "metrics_registry:metric_import": (CURATORS, None),
    "metrics_registry:metric_detail": (EVERYONE, lambda w: {"key": w["metric"].key}),
    "metrics_registry:metric_status_change": (CURATORS, lambda w: {"key": w["metric"].key}),
    # a version's texts in other languages: those who write metric content, experts review
    "metrics_registry:metric_version_texts": (
        VIEWERS,
        lambda w: {"key": w["metric"].key, "number": 1},
    ),
    "metrics_registry:metric_version_text_review": (
        RATERS,
        lambda w: {"key": w["metric"].key, "number": 1, "language": "es"},
    ),
    "metrics_registry:metric_version_text_reopen": (
        VIEWERS,
        lambda w: {"key": w["metric"].key, "number": 1, "language": "es"},
    ),
    "metrics_registry:release_list": (EVERYONE, None),
    "metrics_registry:release_create": (MAINTAINERS, None),
    "metrics_registry:release_detail": (EVERYONE, lambda w: {"version": "1.0.0"}),
    "metrics_registry:release_edit": (MAINTAINERS, lambda w: {"version": "1.1.0"}),
    "metrics_registry:release_publish": (MAINTAINERS, lambda w: {"version": "1.1.0"}),
    "metrics_registry:release_export": (EVERYONE, lambda w: {"version": "1.0.0", "fmt": "csv"}),
    # submissions
    "submissions:list": (SUBMITTERS, None),
    "submissions:create": (SUBMITTERS, None),
    "submissions:detail": (OWNER_AND_CURATORS, lambda w: {"pk": w["submission"].pk}),
    "submissions:edit": (OWNER, lambda w: {"pk": w["submission"].pk}),
    "submissions:candidate-list": (CURATORS, None),
    "submissions:candidate-review": (CURATORS, lambda w: {"pk": w["candidate"].pk}),
    "submissions:action": (
        OWNER_AND_CURATORS,
        lambda w: {"pk": w["submission"].pk, "action": "retry"},
    ),
    # expert review
    # Any account may open its rating list; which queues it holds is decided per queue.
    "review:rater-queues": (SIGNED_IN, None),
    "review:rate": (RATERS, lambda w: {"pk": w["queue"].pk}),
    "review:undo": (RATERS, lambda w: {"pk": w["queue"].pk}),
    "review:submit": (RATERS, lambda w: {"pk": w["assignment"].pk}),
    "review:skip": (RATERS, lambda w: {"pk": w["assignment"].pk}),
    "review:draft": (RATERS, lambda w: {"pk": w["assignment"].pk}),
    "review:queue-list": (CURATORS, None),
    "review:queue-create": (CURATORS, None),
    "review:run-queue-create": (CURATORS, None),
    "review:queue-detail": (CURATORS, lambda w: {"pk": w["queue"].pk}),
    "review:queue-status": (CURATORS, lambda w: {"pk": w["queue"].pk}),
    "review:queue-export": (CURATORS, lambda w: {"pk": w["queue"].pk}),
    "review:priorities": (CURATORS, None),
    "review:contested": (CURATORS, None),
    "review:contested-keep": (MAINTAINERS, lambda w: {"pk": w["metric"].pk}),
    # model configurations and the call log
    "llm:configuration-list": (MAINTAINERS, None),
    "llm:configuration-create": (MAINTAINERS, None),
    "llm:configuration-update": (MAINTAINERS, lambda w: {"pk": w["configuration"].pk}),
    "llm:call-list": (LOG_READERS, None),
    # evaluations
    "evaluations:scenario-index": (VIEWERS, None),
    "evaluations:metric-scenarios": (VIEWERS, lambda w: {"pk": w["scenario"].metric_version_id}),
    "evaluations:scenario-generate": (
        CURATORS,
        lambda w: {"pk": w["scenario"].metric_version_id},
    ),
    "evaluations:scenario-detail": (VIEWERS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:scenario-edit": (CURATORS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:scenario-retire": (CURATORS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:scenario-regenerate": (CURATORS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:scenario-translation-review": (RATERS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:scenario-translate": (CURATORS, lambda w: {"pk": w["scenario"].pk}),
    "evaluations:release-demographics": (VIEWERS, lambda w: {"pk": w["published"].pk}),
    "evaluations:run-list": (CURATORS, None),
    "evaluations:run-create": (MAINTAINERS, None),
    "evaluations:transcript-import": (CURATORS, None),
    "evaluations:run-compare": (CURATORS, None),
    "evaluations:run-detail": (CURATORS, lambda w: {"pk": w["run"].pk}),
    "evaluations:run-action": (MAINTAINERS, lambda w: {"pk": w["run"].pk, "action": "cancel"}),
    # results
    "results:methodology": (EVERYONE, None),
    "results:explore": (EVERYONE, None),
    "results:metric-list": (EVERYONE, None),
    "results:metric": (EVERYONE, lambda w: {"key": w["official_metric"].key}),
    "results:conversation": (EVERYONE, lambda w: {"pk": w["official_conversation"].pk}),
    "results:label": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    "results:label-svg": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    "results:label-overview": (EVERYONE, None),
    "results:label-compare": (EVERYONE, None),
    "results:label-audience": (
        EVERYONE,
        lambda w: {"pk": w["official_target"].pk, "audience": "parent"},
    ),
    "results:label-category": (
        EVERYONE,
        lambda w: {
            "pk": w["official_target"].pk,
            "slug": w["official_conversation"].scenario.metric_version.label_category.slug,
        },
    ),
    "results:label-badge": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    "results:label-png": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    "results:label-pdf": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    "results:run-conversations": (CURATORS, lambda w: {"pk": w["official_run"].pk}),
    "results-api:area-list": (EVERYONE, None),
    "results-api:run-list": (EVERYONE, None),
    "results-api:run-detail": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-results": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-export": (EVERYONE, lambda w: {"pk": w["official_run"].pk, "fmt": "csv"}),
    "results-api:run-conversations": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-judges": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-fidelity": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-swap-studies": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-reasks": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:run-calibration": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:release-expert-figures": (
        EVERYONE,
        lambda w: {"version": w["official_run"].release.version},
    ),
    "results:anchor-study": (EVERYONE, None),
    "results:release-expert-figures": (
        CURATORS,
        lambda w: {"version": w["official_run"].release.version},
    ),
    "results:release-expert-metrics": (
        EVERYONE,
        lambda w: {"version": w["official_run"].release.version},
    ),
    "results-api:conversation": (EVERYONE, lambda w: {"pk": w["official_conversation"].pk}),
    "results-api:scenario": (EVERYONE, lambda w: {"pk": w["official_conversation"].scenario_id}),
    "results-api:explore": (EVERYONE, None),
    "results:rubrics": (EVERYONE, None),
    "results:rubric-items": (EVERYONE, None),
    "results:rubric-priorities": (EVERYONE, None),
    "results:rubric-response": (EVERYONE, lambda w: {"pk": w["official_rubric_response"].pk}),
    "results-api:rubric-runs": (EVERYONE, None),
    "results-api:rubric-run": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:rubric-responses": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:rubric-priorities": (EVERYONE, lambda w: {"pk": w["official_run"].pk}),
    "results-api:rubric-export": (
        EVERYONE,
        lambda w: {"pk": w["official_run"].pk, "fmt": "jsonl"},
    ),
    "results-api:rubric-response": (EVERYONE, lambda w: {"pk": w["official_rubric_response"].pk}),
    "results-api:metric-results": (EVERYONE, lambda w: {"key": w["official_metric"].key}),
    "results-api:label": (EVERYONE, lambda w: {"pk": w["official_target"].pk}),
    # interoperability: exports of published data are public, workspace tools are not
    "release-export-inspect": (EVERYONE, lambda w: {"version": "1.0.0"}),
    "metrics_registry:metrics_needing_mapping": (CURATORS, None),
    "rubrics:rubric-import": (CURATORS, None),
    "rubrics:rubric-export-healthbench": (CURATORS, None),
    "evaluations:rubric-regressions": (CURATORS, None),
    # The world's run is unfinished: only curators read its exports and conversations. An
    # official run's exports are public (test_an_official_runs_exports_are_public).
    "evaluations:run-export": (CURATORS, lambda w: {"pk": w["run"].pk, "fmt": "csv"}),
    "evaluations:conversation-detail": (
        CURATORS,
        lambda w: {"run_pk": w["official_run"].pk, "pk": w["official_conversation"].pk},
    ),
    "evaluations:run-official": (MAINTAINERS, lambda w: {"pk": w["official_run"].pk}),
    "evaluations:swap-study-create": (MAINTAINERS, lambda w: {"pk": w["official_run"].pk}),
    "llm:configuration-test": (MAINTAINERS, lambda w: {"pk": w["configuration"].pk}),
    # people without an account write in; researchers and maintainers answer
    "contact:form": (EVERYONE, None),
    "submissions:enquiry-list": (CURATORS, None),
    "submissions:enquiry-detail": (CURATORS, lambda w: {"pk": w["enquiry"].pk}),
    "favicon": (EVERYONE, None),
    "set_language": (EVERYONE, None),
    # API (read-only; submissions need an account and show only what the caller may see)
    "registry-api:metric-list": (EVERYONE, None),
    "registry-api:metric-detail": (EVERYONE, lambda w: {"key": w["metric"].key}),
    "registry-api:release-list": (EVERYONE, None),
    "registry-api:release-detail": (EVERYONE, lambda w: {"version": "1.0.0"}),
    "submissions-api:submission-list": (SIGNED_IN, None),
    "submissions-api:submission-detail": (OWNER_AND_CURATORS, lambda w: {"pk": w["submission"].pk}),
    "api-schema": (EVERYONE, None),
    "api-docs": (EVERYONE, None),
    # accounts (allauth): sign-in pages are public, account pages need an account
    "account_login": (EVERYONE, None),
    "account_logout": (EVERYONE, None),
    "account_inactive": (EVERYONE, None),
    "account_signup": (EVERYONE, None),
    "account_reauthenticate": (SIGNED_IN, None),
    "account_request_reauthentication_code": (SIGNED_IN, None),
    "account_confirm_reauthentication_code": (SIGNED_IN, None),
    "account_email": (SIGNED_IN, None),
    "account_email_verification_sent": (EVERYONE, None),
    "account_change_password": (SIGNED_IN, None),
    "account_set_password": (SIGNED_IN, None),
    "account_reset_password": (EVERYONE, None),
    # Outside a sign-in in progress it sends visitors back to sign in.
    "account_confirm_login_code": (SIGNED_IN, None),
    "account_confirm_email": (EVERYONE, lambda w: {"key": "not-a-key"}),
    "account_reset_password_from_key_done": (EVERYONE, None),
    "account_reset_password_from_key": (EVERYONE, lambda w: {"uidb36": "1", "key": "x-y"}),
    "account_reset_password_done": (EVERYONE, None),
    # admin pages that belong to no model
    "admin:index": (MAINTAINERS | {STAFF}, None),
    # Admins are sent on to the index; visitors to the site's sign-in; others refused.
    "admin:login": (MAINTAINERS | {STAFF}, None),
    "admin:logout": (EVERYONE, None),
    "admin:password_change": (MAINTAINERS | {STAFF}, None),
    "admin:password_change_done": (MAINTAINERS | {STAFF}, None),
    "admin:jsi18n": (MAINTAINERS | {STAFF}, None),
    # Needs a model and field in its query; refused to everyone without them.
    "admin:autocomplete": (NOBODY, None),
    # Setting another account's password: nobody here (superusers only).
    "admin:auth_user_password_change": (NOBODY, lambda w: {"id": w["submission"].contributor_id}),
}
# Admin model pages: who may open the changelist of each app's models.
ADMIN_APP_RULES = {
    "llm": MAINTAINERS,
    "metrics_registry": MAINTAINERS,
    "evaluations": MAINTAINERS,
    "rubrics": MAINTAINERS,
    "review": MAINTAINERS,
    "submissions": MAINTAINERS,
    "results": MAINTAINERS,
    "core": MAINTAINERS,  # the role-change audit trail, read-only
    "auth": NOBODY,  # accounts: staff with explicit permissions only
    "account": NOBODY,
    "sites": NOBODY,
}
# Patterns with no fixed target to test: the admin's generic redirects (old object URLs, the
# catch-all), "view on site" and per-app indexes, all behind the same admin_view check.
# Also public pages whose answer is not about the visitor: readiness is 503 while no worker
# heartbeat exists (tests/core/test_deployment.py). The anchor study's API
# answers 404 for everyone until a study is published (tests/results/test_anchor_study.py reads
# a published one anonymously).
NOT_TESTED = re.compile(
    r"^(admin:(view_on_site|app_list|<unnamed .*>)|core:ready"
    r"|results-api:anchor-study)$"
)


def _patterns(patterns=None, namespace=""):
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            inner = entry.namespace or ""
            prefix = f"{namespace}:{inner}" if namespace and inner else namespace or inner
            yield from _patterns(entry.url_patterns, prefix)
        elif isinstance(entry, URLPattern):
            name = entry.name or f"<unnamed {entry.pattern}>"
            yield f"{namespace}:{name}" if namespace else name


def _admin_model_names() -> dict[str, str]:
    """admin URL name -> app label, for every registered model's pages."""
    names = {}
    for model in admin.site._registry:
        meta = model._meta
        for view in ("changelist", "add", "change", "delete", "history"):
            names[f"admin:{meta.app_label}_{meta.model_name}_{view}"] = meta.app_label
    return names


def test_every_url_pattern_has_a_rule():
    admin_names = _admin_model_names()
    missing = [
        name
        for name in _patterns()
        if name not in RULES and name not in admin_names and not NOT_TESTED.match(name)
    ]
    assert missing == [], "Add these URL names to RULES in tests/security/test_access_matrix.py"
    assert set(admin_names.values()) <= set(ADMIN_APP_RULES)


@pytest.fixture
def world(researcher, settings, tmp_path, monkeypatch):
    """One of everything the URLs point at."""
    from results import label_files

    settings.MEDIA_ROOT = tmp_path
    metric = MetricFactory(name="Offers a next step", status="validated")
    MetricFactory(name="Offers another step", status="validated")
    published = release_with("1.0.0", [metric], publish=True)
    draft = release_with("1.1.0", [metric])
    owner = UserFactory(roles=[Role.CONTRIBUTOR])
    submission = SubmissionFactory(contributor=owner)
    candidate = MetricCandidate.objects.create(
        submission=submission,
        short_name="Asks first",
        criterion="The assistant asks first.",
        polarity="positive",
        label_category=LabelCategory.objects.first(),
    )
    expert = UserFactory(roles=[Role.CONTRIBUTOR, Role.EXPERT_REVIEWER])
    queue = metric_queue(n=2, required=1, created_by=researcher)
    assignment = assignment_claim(queue=queue, rater=expert)
    scenario = ScenarioFactory()
    run = ConversationFactory().run
    official_run = published_run(version="2.0.0")
    official_conversation = official_run.conversations.order_by("pk").first()
    official_rubric_response = add_rubric_responses(official_run, n_items=2)[0]
    # The label's PNG and PDF exist as drawn files (by Chromium, here by a stand-in).
    monkeypatch.setattr(label_files, "label_pages", lambda jobs: [b"drawn" for _ in jobs])
    label_files.label_files_render(run=official_run)
    enquiry = Enquiry.objects.create(
        kind=EnquiryKind.choices[0][0],
        name="A visitor",
        email="visitor@example.org",
        message="Hi",
        client_hash="0" * 64,
    )
    return {
        "official_run": official_run,
        "official_conversation": official_conversation,
        "official_rubric_response": official_rubric_response,
        "official_metric": official_conversation.scenario.metric_version.metric,
        "official_target": official_conversation.target,
        "enquiry": enquiry,
        "metric": metric,
        "published": published,
        "draft": draft,
        "submission": submission,
        "candidate": candidate,
        "queue": queue,
        "assignment": assignment,
        "scenario": scenario,
        "run": run,
        "configuration": ModelConfigurationFactory(),
        "visitors": {
            ANON: None,
            CONTRIB: owner,
            OTHER: UserFactory(roles=[Role.CONTRIBUTOR]),
            EXPERT: expert,
            RESEARCHER: researcher,
            MAINTAINER: UserFactory(roles=[Role.CONTRIBUTOR, Role.MAINTAINER]),
            STAFF: UserFactory(is_staff=True),
        },
    }


LOGIN_PATHS = ("/accounts/login/", "/admin/login/")


def _refused(response, *, method: str = "GET") -> bool:
    # 405 changes nothing: a refusal for a POST; for a GET of a POST-only view it says nothing
    # (the POST, sent to every refused visitor, is what is checked there).
    if response.status_code in (401, 403, 404) or (
        method == "POST" and response.status_code == 405
    ):
        return True
    location = response.get("Location", "")
    return response.status_code == 302 and any(location.startswith(path) for path in LOGIN_PATHS)


def _check(client, world, name, url, allowed, *, post_when_refused=True):
    wrong = []
    for visitor, user in world["visitors"].items():
        client.logout()
        if user is not None:
            client.force_login(user)
        response = client.get(url)
        assert response.status_code < 500, (name, visitor, response.status_code)
        refused = _refused(response)
        if response.status_code != 405 and refused == (visitor in allowed):
            wrong.append(f"{visitor}: GET {response.status_code}")
        if visitor not in allowed and post_when_refused:
            posted = client.post(url, {})
            assert posted.status_code < 500, (name, visitor, posted.status_code)
            if not _refused(posted, method="POST"):
                wrong.append(f"{visitor}: POST {posted.status_code}")
    return wrong


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_page_admits_exactly_its_visitors(client, world, name):
    allowed, kwargs = RULES[name]
    url = reverse(name, kwargs=kwargs(world) if kwargs else None)
    # Sign-in and sign-out forms accept anyone's POST by design.
    post = not name.startswith(("account_", "admin:login", "admin:logout"))
    assert _check(client, world, name, url, allowed, post_when_refused=post) == []


@pytest.mark.parametrize("name", sorted(_admin_model_names()))
def test_each_admin_page_follows_its_apps_rule(client, world, name):
    app_label = _admin_model_names()[name]
    allowed = ADMIN_APP_RULES[app_label]
    model = next(
        m
        for m in admin.site._registry
        if name.startswith(f"admin:{m._meta.app_label}_{m._meta.model_name}_")
    )
    view = name.rsplit("_", 1)[1]
    if view in ("change", "delete", "history"):
        obj = model._default_manager.first()
        if obj is None:
            pytest.skip(f"no {model._meta.model_name} in the world")
        url = reverse(name, args=[obj.pk])
    else:
        url = reverse(name)
    if view != "changelist":
        # Adding, changing and deleting may be closed even to maintainers (read-only records);
        # what must hold is that nobody outside the rule gets in.
        allowed = frozenset()
        refused_expected = set(VISITORS) - ADMIN_APP_RULES[app_label]
        wrong = [
            entry
            for entry in _check(client, world, name, url, allowed)
            if entry.split(":")[0] in refused_expected
        ]
    else:
        wrong = _check(client, world, name, url, allowed)
    assert wrong == []


# Pages of a run's results that staff may open for any run (marked "not public") while every
# other visitor gets a 404 until a maintainer makes the run official.
UNOFFICIAL_RESULT_PAGES = (
    ("results:explore", None),
    ("results:methodology", None),
    ("results:metric", "metric"),
    ("results:label", "target"),
    ("results:label-svg", "target"),
    ("results:label-badge", "target"),
    ("results:label-category", "category"),
)


@pytest.mark.parametrize(("name", "arg"), UNOFFICIAL_RESULT_PAGES)
def test_an_unofficial_runs_results_open_for_staff_only(client, world, name, arg):
    run = published_run(version="3.0.0", official=False, names=("Offline unofficial",))
    conversation = run.conversations.order_by("pk").first()
    kwargs = {
        None: None,
        "metric": {"key": conversation.scenario.metric_version.metric.key},
        "target": {"pk": conversation.target_id},
        "category": {
            "pk": conversation.target_id,
            "slug": conversation.scenario.metric_version.label_category.slug,
        },
    }[arg]
    url = reverse(name, kwargs=kwargs) + f"?run={run.pk}"
    wrong = _check(client, world, name, url, CURATORS, post_when_refused=False)
    assert wrong == []
    client.force_login(world["visitors"][MAINTAINER])
    response = client.get(url)
    if name in ("results:label-svg", "results:label-badge"):
        # Staff answers are never stored for others: a signed-out reader still gets a 404.
        client.logout()
        assert client.get(url).status_code == 404
    else:
        assert "Not public — visible to staff only" in response.content.decode()


# Every page scoped to one release, opened on the world's draft: drafts are for maintainers
# only, whatever the page admits for a published release. The public frozen-figure pages have
# nothing to show before publication and answer 404 to everyone.
DRAFT_RELEASE_RULES = {
    "metrics_registry:release_detail": (MAINTAINERS, lambda d: {"version": d.version}),
    "metrics_registry:release_edit": (MAINTAINERS, lambda d: {"version": d.version}),
    "metrics_registry:release_publish": (MAINTAINERS, lambda d: {"version": d.version}),
    "metrics_registry:release_export": (
        MAINTAINERS,
        lambda d: {"version": d.version, "fmt": "csv"},
    ),
    "release-export-inspect": (MAINTAINERS, lambda d: {"version": d.version}),
    "registry-api:release-detail": (MAINTAINERS, lambda d: {"version": d.version}),
    "evaluations:release-demographics": (MAINTAINERS, lambda d: {"pk": d.pk}),
    "results:release-expert-figures": (MAINTAINERS, lambda d: {"version": d.version}),
    "results:release-expert-metrics": (NOBODY, lambda d: {"version": d.version}),
    "results-api:release-expert-figures": (NOBODY, lambda d: {"version": d.version}),
}


def _routes(patterns=None, namespace="", prefix=""):
    """(url name, route) for every pattern, the route joined from its resolvers' prefixes."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = entry.namespace or ""
            spaced = f"{namespace}:{inner}" if namespace and inner else namespace or inner
            yield from _routes(entry.url_patterns, spaced, route)
        elif isinstance(entry, URLPattern) and entry.name:
            yield (f"{namespace}:{entry.name}" if namespace else entry.name), route


def test_every_release_scoped_url_has_a_draft_rule():
    scoped = {
        name for name, route in _routes() if "releases/<" in route and not name.startswith("admin:")
    }
    assert scoped == set(DRAFT_RELEASE_RULES)


@pytest.mark.parametrize("name", sorted(DRAFT_RELEASE_RULES))
def test_each_release_page_keeps_a_draft_to_maintainers(client, world, name):
    allowed, kwargs = DRAFT_RELEASE_RULES[name]
    assert not world["draft"].is_published
    url = reverse(name, kwargs=kwargs(world["draft"]))
    assert _check(client, world, name, url, allowed) == []


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_official_runs_exports_are_public(client, world, fmt):
    """The published release's page links its public runs' exports for every visitor, so they
    are public downloads (without the transcripts held for blind review), not curator tools."""
    run = world["official_run"]
    url = reverse("evaluations:run-export", kwargs={"pk": run.pk, "fmt": fmt})
    release_page = client.get(
        reverse("metrics_registry:release_detail", args=[run.release.version])
    )
    assert url in release_page.content.decode()
    assert _check(client, world, "evaluations:run-export", url, EVERYONE) == []
