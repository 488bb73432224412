import csv
import io

import pytest
from django.urls import reverse

from core.navigation import navigation_for
from core.roles import Role
from review.agreement import rater_pseudonym
from review.models import Assignment, ContestedMetricKeep, Rating, RatingDraft, RatingQueue
from review.services import assignment_claim
from tests.factories import UserFactory
from tests.metrics_registry.factories import MetricFactory

from .factories import metric_queue

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(researcher):
    for n in range(3):
        MetricFactory(name=f"Offers a next step {n}", status="validated")
    return metric_queue(n=3, required=2, created_by=researcher)


ROLE_FIXTURES = ["contributor", "researcher", "expert_reviewer", "maintainer"]


def manager_urls(queue):
    return [
        reverse("review:queue-list"),
        reverse("review:queue-create"),
        reverse("review:queue-detail", args=[queue.pk]),
        reverse("review:queue-export", args=[queue.pk]),
        reverse("review:contested"),
        reverse("review:priorities"),
    ]


@pytest.mark.parametrize("role", ROLE_FIXTURES)
def test_manager_pages_are_for_researchers_and_maintainers(request, role, queue, client):
    user = request.getfixturevalue(role)
    client.force_login(user)
    allowed = role in ("researcher", "maintainer")
    for url in manager_urls(queue):
        response = client.get(url)
        assert response.status_code == (200 if allowed else 403), url


def test_anonymous_visitors_are_sent_to_sign_in(client, queue):
    urls = [
        *manager_urls(queue),
        reverse("review:rater-queues"),
        reverse("review:rate", args=[queue.pk]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302
        assert "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", ROLE_FIXTURES)
def test_only_eligible_raters_reach_the_rating_screen(request, role, queue, client):
    user = request.getfixturevalue(role)
    client.force_login(user)
    listing = client.get(reverse("review:rater-queues"))
    assert listing.status_code == 200
    response = client.get(reverse("review:rate", args=[queue.pk]))
    if role == "expert_reviewer":
        assert queue.name in listing.content.decode()
        assert response.status_code == 200
    else:
        assert queue.name not in listing.content.decode()
        assert response.status_code == 404


def test_a_named_external_panelist_without_a_role_can_rate(client, researcher):
    MetricFactory(status="validated")
    panelist = UserFactory()
    queue = metric_queue(
        n=1, created_by=researcher, eligible_raters=[panelist], external_panel=True
    )
    client.force_login(panelist)
    assert client.get(reverse("review:rate", args=[queue.pk])).status_code == 200


def test_the_rating_screen_shows_the_item_blind_with_shortcuts(client, expert_reviewer, queue):
    client.force_login(expert_reviewer)
    html = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "Offers a next step" in html
    assert 'data-key="1"' in html
    assert "Keyboard shortcuts" in html
    assert "Faithful" in html
    assert "Partly faithful" in html
    assert "You rated <strong" in html


def test_submit_skip_draft_and_undo_through_the_screen(client, expert_reviewer, queue):
    client.force_login(expert_reviewer)
    client.get(reverse("review:rate", args=[queue.pk]))
    assignment = Assignment.objects.get(rater=expert_reviewer)
    draft = client.post(
        reverse("review:draft", args=[assignment.pk]),
        {"answer-fidelity": "partly", "comment": "Half of it"},
    )
    assert draft.status_code == 200
    assert RatingDraft.objects.get(assignment=assignment).answers == {"fidelity": "partly"}
    # A reload restores the draft.
    html = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert 'value="partly" autocomplete="off" data-key="2" checked' in html
    assert "Half of it" in html

    response = client.post(
        reverse("review:submit", args=[assignment.pk]),
        {"answer-fidelity": "faithful", "comment": "Fine"},
    )
    assert response.status_code == 302
    assert Rating.objects.get(assignment=assignment).answers == {"fidelity": "faithful"}

    client.get(reverse("review:rate", args=[queue.pk]))
    second = Assignment.objects.get(rater=expert_reviewer, status="claimed")
    client.post(reverse("review:skip", args=[second.pk]))
    second.refresh_from_db()
    assert second.status == "skipped"

    client.post(reverse("review:undo", args=[queue.pk]))
    assignment.refresh_from_db()
    assert assignment.status == "claimed"
    assert Rating.objects.current().filter(rater=expert_reviewer).count() == 0


def test_a_rater_cannot_act_on_someone_elses_assignment(client, expert_reviewer, queue):
    other = UserFactory(roles=[Role.EXPERT_REVIEWER])
    assignment = assignment_claim(queue=queue, rater=other)
    client.force_login(expert_reviewer)
    for name in ("review:submit", "review:skip", "review:draft"):
        response = client.post(reverse(name, args=[assignment.pk]), {"answer-fidelity": "x"})
        assert response.status_code == 404
    assert not Rating.objects.exists()


def test_a_researcher_creates_a_queue_from_the_form(client, researcher):
    for _ in range(4):
        MetricFactory(status="validated")
    client.force_login(researcher)
    panelist = UserFactory(email="panel@example.org", username="panel@example.org")
    response = client.post(
        reverse("review:queue-create"),
        {
            "name": "Panel check",
            "kind": "metric",
            "sample_fraction": "0.5",
            "strata": ["subarea", "age_context"],
            "required_ratings": "3",
            "eligible_rater_emails": "panel@example.org\n",
            "external_panel": "on",
            "claim_timeout_minutes": "20",
            "seed": "11",
        },
    )
    queue = RatingQueue.objects.get(name="Panel check")
    assert response.status_code == 302
    assert queue.items.count() == 2
    assert list(queue.eligible_raters.all()) == [panelist]
    assert queue.external_panel
    assert queue.claim_timeout_minutes == 20
    detail = client.get(reverse("review:queue-detail", args=[queue.pk])).content.decode()
    assert "Items complete" in detail
    assert "panel@example.org" in detail
    assert 'stratified by <span data-testid="queue-strata">subarea, age context</span>' in detail
    assert "age_context" not in detail


def test_the_queue_form_refuses_unknown_raters_and_missing_sizes(client, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("review:queue-create"),
        {
            "name": "x",
            "kind": "metric",
            "required_ratings": "3",
            "claim_timeout_minutes": "30",
            "eligible_rater_emails": "nobody@example.org",
        },
    )
    html = response.content.decode()
    assert "No active account for: nobody@example.org" in html
    assert "Give either a sample size or a sample fraction" in html
    assert not RatingQueue.objects.exists()


def test_csv_export_holds_every_rating_pseudonymously(client, researcher, expert_reviewer, queue):
    from review.services import rating_submit

    assignment = assignment_claim(queue=queue, rater=expert_reviewer)
    rating_submit(
        assignment=assignment, rater=expert_reviewer, answers={"fidelity": "partly"}, comment="ok"
    )
    client.force_login(researcher)
    response = client.get(reverse("review:queue-export", args=[queue.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 1
    assert rows[0]["fidelity"] == "partly"
    assert rows[0]["rater"] == rater_pseudonym(queue, expert_reviewer.pk)
    assert rows[0]["metric_key"].startswith("IB-M-")
    assert expert_reviewer.email not in str(rows)


def test_only_maintainers_keep_contested_metrics(client, researcher, maintainer):
    metric = MetricFactory(status="contested")
    url = reverse("review:contested-keep", args=[metric.pk])
    client.force_login(researcher)
    assert client.post(url, {"reason": "Clinically essential."}).status_code == 403
    client.force_login(maintainer)
    page = client.get(reverse("review:contested")).content.decode()
    assert metric.key in page
    assert "held back from releases" in page
    client.post(url, {"reason": "Clinically essential despite mixed ratings."})
    assert ContestedMetricKeep.objects.get(metric=metric).kept_by == maintainer
    client.post(url, {"revoke": "1"})
    assert not ContestedMetricKeep.objects.exists()


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("contributor", set()),
        ("expert_reviewer", {"Rating queue"}),
        ("researcher", {"Review queues", "Contested metrics"}),
        ("maintainer", {"Review queues", "Contested metrics"}),
    ],
)
def test_navigation_entries_per_role(request, role, expected):
    workspace = navigation_for(request.getfixturevalue(role))["workspace"]
    labels = {entry["label"] for entry in workspace}
    assert labels & {"Rating queue", "Review queues", "Contested metrics"} == expected
