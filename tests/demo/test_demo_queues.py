"""A fresh demo has a rating queue per kind, and the demo reviewer has work at once."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from review.demo import demo_queue_name, demo_rating_queues_seed
from review.models import ItemKind, RatingQueue
from tests.review.test_evaluation_kinds import completed_conversation

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo twice"),
    pytest.mark.embedded,
]


def test_seed_demo_creates_queues_the_demo_reviewer_can_rate_and_rerunning_keeps_them(client):
    call_command("seed_demo", verbosity=0)
    for _ in range(3):
        completed_conversation(verdict=True)
    report = demo_rating_queues_seed()  # the evaluations exist now: their kinds get queues
    assert "created" in report
    kinds = set(RatingQueue.objects.values_list("kind", flat=True))
    for kind in (
        ItemKind.METRIC,
        ItemKind.SCENARIO,
        ItemKind.CONVERSATION,
        ItemKind.JUDGE_VERDICT,
        ItemKind.EXTERNAL_PANEL,
        ItemKind.RUBRIC_CRITERION,
    ):
        assert kind in kinds, kind
    assert all(queue.items.exists() for queue in RatingQueue.objects.all())
    count = RatingQueue.objects.count()
    demo_rating_queues_seed()
    assert RatingQueue.objects.count() == count

    reviewer = get_user_model().objects.get(email="reviewer@demo.impactbench.org")
    client.force_login(reviewer)
    listing = client.get(reverse("review:rater-queues")).content.decode()
    assert demo_queue_name(ItemKind.METRIC) in listing
    assert demo_queue_name(ItemKind.EXTERNAL_PANEL) in listing
    metric_queue = RatingQueue.objects.get(kind=ItemKind.METRIC)
    page = client.get(reverse("review:rate", args=[metric_queue.pk])).content.decode()
    assert 'data-testid="rated-item"' in page
