"""A conversation's fidelity reading on the workspace page, read without a query of its own."""

import pytest
from django.urls import reverse

from evaluations.models import Conversation
from evaluations.selectors import conversation_fidelity, run_conversations_for_reading
from tests.evaluations.factories import fidelity_reading
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def test_the_selector_labels_each_criterion_and_costs_no_query(django_assert_num_queries):
    run = published_run()
    checked, unchecked = Conversation.objects.filter(run=run).order_by("pk")[:2]
    fidelity_reading(checked, failed=("responsive",))
    conversation = run_conversations_for_reading(run.pk).get(pk=checked.pk)
    judge = run.judge.name
    with django_assert_num_queries(0):
        fidelity = conversation_fidelity(conversation)
        assert fidelity["reading"].checker.name == judge
    assert fidelity["reading"].passed is False
    labels = [(c["label"], c["held"]) for c in fidelity["criteria"]]
    assert labels[0] == ("Stays in persona and age register", True)
    assert labels[-1] == ("Follows from the assistant's last reply", False)
    bare = run_conversations_for_reading(run.pk).get(pk=unchecked.pk)
    with django_assert_num_queries(0):
        assert conversation_fidelity(bare) is None


def test_the_workspace_conversation_page_shows_the_reading(client, researcher):
    run = published_run()
    conversation, unchecked = Conversation.objects.filter(run=run).order_by("pk")[:2]
    fidelity_reading(conversation)
    client.force_login(researcher)
    url = reverse("evaluations:conversation-detail", args=[run.pk, conversation.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="fidelity-reading"' in page
    assert "Met the fidelity bar" in page
    assert "Stays in persona and age register" in page
    assert "0 user turns repeat" in page
    other = reverse("evaluations:conversation-detail", args=[run.pk, unchecked.pk])
    assert "Not checked yet." in client.get(other).content.decode()
