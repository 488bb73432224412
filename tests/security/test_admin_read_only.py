"""Ratings, assignments and authorship are written only by their author through the product's
own pages: the admin reads them and refuses every add, change and delete, to maintainers and
to superusers alike."""

import json

import pytest
from django.urls import reverse

from core.roles import Role
from review.models import Assignment, QueueItem, Rating, RatingQueue
from review.services import assignment_claim, rating_submit
from submissions.models import Submission
from tests.factories import UserFactory
from tests.review.factories import metric_queue, synthetic_candidates
from tests.submissions.factories import SubmissionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["maintainer", "superuser"])
def admin_user(request):
    if request.param == "maintainer":
        return UserFactory(roles=[Role.MAINTAINER])
    return UserFactory(is_staff=True, is_superuser=True)


@pytest.fixture
def rated():
    queue = metric_queue(n=2, required=2, candidates=synthetic_candidates(2))
    expert = UserFactory(roles=[Role.EXPERT_REVIEWER])
    assignment = assignment_claim(queue=queue, rater=expert)
    rating = rating_submit(assignment=assignment, rater=expert, answers={"fidelity": "faithful"})
    return rating


def _forged_rating(rating: Rating) -> dict:
    return {
        "queue": rating.queue_id,
        "item": rating.item_id,
        "assignment": rating.assignment_id,
        "rater": rating.rater_id,
        "answers": json.dumps({"fidelity": "unfaithful"}),
        "comment": "forged",
        "seconds_spent": "3",
    }


def test_nobody_adds_changes_or_deletes_a_rating_in_the_admin(client, admin_user, rated):
    client.force_login(admin_user)
    before = list(Rating.objects.values())
    requests = [
        (reverse("admin:review_rating_add"), _forged_rating(rated)),
        (reverse("admin:review_rating_change", args=[rated.pk]), _forged_rating(rated)),
        (reverse("admin:review_rating_delete", args=[rated.pk]), {"post": "yes"}),
        (
            reverse("admin:review_rating_changelist"),
            {"action": "delete_selected", "_selected_action": [rated.pk], "post": "yes"},
        ),
        (reverse("admin:review_assignment_add"), {"queue": rated.queue_id, "status": "open"}),
        (reverse("admin:review_assignment_delete", args=[rated.assignment_id]), {"post": "yes"}),
        (reverse("admin:review_queueitem_delete", args=[rated.item_id]), {"post": "yes"}),
        (reverse("admin:review_ratingqueue_delete", args=[rated.queue_id]), {"post": "yes"}),
    ]
    for url, data in requests:
        response = client.post(url, data)
        # The changelist answers an action it does not offer with the list itself.
        refused = (200,) if url == reverse("admin:review_rating_changelist") else (403,)
        assert response.status_code in refused, (url, response.status_code)
    assert list(Rating.objects.values()) == before
    assert Assignment.objects.filter(pk=rated.assignment_id).exists()
    assert QueueItem.objects.filter(pk=rated.item_id).exists()
    assert RatingQueue.objects.filter(pk=rated.queue_id).exists()
    # Reading stays open.
    assert client.get(reverse("admin:review_rating_changelist")).status_code == 200
    assert client.get(reverse("admin:review_rating_change", args=[rated.pk])).status_code == 200


def test_nobody_changes_who_wrote_a_submission_in_the_admin(client, admin_user):
    submission = SubmissionFactory()
    author = submission.contributor
    someone_else = UserFactory(roles=[Role.CONTRIBUTOR])
    client.force_login(admin_user)
    url = reverse("admin:submissions_submission_change", args=[submission.pk])
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="contributor"' not in page.content.decode()
    client.post(url, {"contributor": someone_else.pk, "title": submission.title})
    submission.refresh_from_db()
    assert submission.contributor == author
    count = Submission.objects.count()
    response = client.post(
        reverse("admin:submissions_submission_add"),
        {"contributor": someone_else.pk, "title": "In another's name", "behavior": "x"},
    )
    assert response.status_code == 403
    assert Submission.objects.count() == count
