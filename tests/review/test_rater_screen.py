"""What a rater sees: offline labels, readable personas, whole justifications, bounded queries."""

import pytest
from django.urls import reverse

from core.text import shorten_words
from review.services import queue_create
from tests.evaluations.factories import ScenarioFactory
from tests.review.test_evaluation_kinds import completed_conversation, experts

pytestmark = pytest.mark.django_db


def rate_page(client, queue) -> str:
    client.force_login(experts(1)[0])
    return client.get(reverse("review:rate", args=[queue.pk])).content.decode()


@pytest.mark.parametrize("offline", [True, False])
def test_offline_transcripts_are_labelled_on_the_rater_screen(client, researcher, offline):
    conversation = completed_conversation(verdict=True)
    conversation.is_offline = offline
    conversation.save(update_fields=["is_offline"])
    queue = queue_create(
        name="Verdicts", kind="judge_verdict", created_by=researcher, size=1, seed=1
    )
    page = rate_page(client, queue)
    transcript = page.split('data-testid="rated-item"')[1]
    assert ("offline demo model" in transcript) is offline
    assert conversation.target.name not in page  # raters never learn which model it was


def test_persona_keys_read_as_words(client, researcher):
    ScenarioFactory(
        persona={
            "name": "Mia",
            "age": 15,
            "other_attributes": {"living_situation": "with her aunt", "first_language": "Polish"},
        }
    )
    queue = queue_create(name="Scenarios", kind="scenario", created_by=researcher, size=1, seed=1)
    page = rate_page(client, queue)
    assert "<strong>Living situation:</strong> with her aunt" in page
    assert "<strong>First language:</strong> Polish" in page
    assert "Living_situation" not in page


def test_shortened_text_ends_on_a_whole_word():
    text = "Points out respectfully when the question rests on a discriminatory premise"
    short = shorten_words(text, 40)
    assert len(short) <= 40
    assert short.endswith(" …")
    assert text.startswith(short.removesuffix(" …"))
    assert text[len(short.removesuffix(" …"))] == " "  # the cut fell between words


def test_the_offline_judge_never_cuts_its_justification():
    from evaluations.offline_judge import judge_verdict
    from evaluations.prompts import judge_messages  # the real prompt the judge reads

    conversation = completed_conversation()
    version = conversation.scenario.metric_version
    criterion = " ".join([version.criterion] * 4)
    version.criterion = criterion
    messages = judge_messages(
        version=version, scenario=conversation.scenario, turns=list(conversation.turns.all())
    )
    justification = judge_verdict(messages, 0, conversation.run.judge)["justification"]
    # The whole criterion, never cut, in full sentences.
    assert f"({criterion.strip().rstrip('.')})" in justification
    assert "…" not in justification
    assert justification.endswith(".")


@pytest.mark.parametrize("size", [3, 12])
def test_rate_page_and_queue_creation_queries_do_not_grow_with_the_queue(
    client, researcher, size, django_assert_max_num_queries
):
    for _ in range(size):
        completed_conversation(verdict=True)
    with django_assert_max_num_queries(8):
        queue = queue_create(
            name="Verdicts", kind="judge_verdict", created_by=researcher, size=size, seed=1
        )
    client.force_login(experts(1)[0])
    url = reverse("review:rate", args=[queue.pk])
    client.get(url)
    with django_assert_max_num_queries(20):
        client.get(url)


def test_per_rater_majority_agreement_says_why_when_it_cannot_be_computed(client, researcher):
    from tests.metrics_registry.factories import MetricFactory
    from tests.review.factories import metric_queue
    from tests.review.test_evaluation_kinds import rate_all

    for n in range(3):
        MetricFactory(name=f"Offers a next step {n}", status="validated")
    queue = metric_queue(n=3, required=2, created_by=researcher)
    rate_all(queue, experts(2), lambda assignment, rater: {"fidelity": "faithful"})
    client.force_login(researcher)
    page = client.get(reverse("review:queue-detail", args=[queue.pk])).content.decode()
    table = page.split('data-testid="rater-figures"')[1].split("</table>")[0]
    assert "(n=0)" not in table
    assert table.count("this queue collects 2 ratings per item") == 2
