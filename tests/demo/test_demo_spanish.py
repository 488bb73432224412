"""The demo in Spanish: a few metrics of the demo release have Spanish scenarios (one set
written natively, two reviewed machine translations), the demo run plays them with the offline
models, Spanish from the first user turn to the judge's quote, and their rating items go to the
demo reviewer, who reads English and Spanish."""

from functools import partial

import pytest
from django.contrib.auth import get_user_model

from core.demo import demo_accounts_seed
from evaluations.demo import DEMO_RUN_NAME, demo_run_seed, demo_scenarios_seed, demo_spanish_seed
from evaluations.demo_spanish import DEMO_SPANISH_METRICS
from evaluations.models import Conversation, Scenario, TranslationProvenance
from llm.demo import demo_configurations_seed
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from results.services.releases import RELEASE_FREEZES
from review.demo import demo_rating_queues_seed
from review.models import QueueItem
from rubrics.demo import demo_rubric_items_seed
from tests.evaluations.test_spanish_conversation import spanish

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's offline run of three metrics"),
    pytest.mark.embedded,
]


@pytest.fixture
def demo_run(monkeypatch):
    names = {name for name, _how, _country in DEMO_SPANISH_METRICS}
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", [m for m in DEMO_METRICS if m[0] in names])
    demo_accounts_seed()
    for step in (
        demo_configurations_seed,
        registry_demo.demo_registry_seed,
        partial(registry_demo.demo_release_seed, freezes=RELEASE_FREEZES),
        demo_rubric_items_seed,
        demo_scenarios_seed,
        demo_spanish_seed,
        demo_run_seed,
    ):
        step()
    return Conversation.objects.filter(run__name=DEMO_RUN_NAME).select_related("scenario")


def test_the_demo_writes_native_and_reviewed_spanish_scenarios_and_keeps_them(demo_run):
    spanish_scenarios = Scenario.objects.active().filter(language="es")
    native = spanish_scenarios.filter(translation_provenance=TranslationProvenance.NATIVE)
    reviewed = spanish_scenarios.filter(
        translation_provenance=TranslationProvenance.MACHINE_REVIEWED
    )
    assert native.count() == 6
    assert set(native.values_list("country", flat=True)) == {"ES"}
    assert reviewed.count() == 4
    assert set(reviewed.values_list("country", flat=True)) == {"ES", "MX"}
    assert all(s.translation_reviewed_by.email.startswith("reviewer@") for s in reviewed)
    assert "0 written, 0 machine" in demo_spanish_seed()  # a second seed keeps them


def test_the_demo_release_holds_spanish_conversations_from_first_turn_to_judges_quote(demo_run):
    conversations = [c for c in demo_run if c.scenario.language == "es"]
    assert len(conversations) == 10 * 3
    assert len(demo_run) == (3 * 6 + 10) * 3
    for conversation in conversations:
        turns = list(conversation.turns.order_by("index"))
        assert turns, (conversation.status, conversation.error)
        for turn in turns:
            assert spanish(turn.user_text_clean), turn.user_text_clean
            assert spanish(turn.assistant_text), turn.assistant_text
        for judgment in conversation.judgments.all():
            for item in judgment.evidence:
                assert spanish(item["quote"]), item["quote"]
                assert item["found_in_transcript"]
    english = [c for c in demo_run if c.scenario.language == "en"]
    assert not any(spanish(t.user_text_clean) for c in english[:10] for t in c.turns.all())


def test_spanish_rating_items_go_to_the_demo_reviewer_who_reads_spanish(demo_run):
    demo_rating_queues_seed()
    items = QueueItem.objects.filter(language="es")
    assert items.exists()
    reviewer = get_user_model().objects.get(email="reviewer@demo.impactbench.org")
    assert QueueItem.objects.readable_by(reviewer).filter(language="es").count() == items.count()
    assert QueueItem.objects.readable_by(reviewer).filter(language="en").exists()
    outsider = get_user_model().objects.get(email="researcher@demo.impactbench.org")
    assert not QueueItem.objects.readable_by(outsider).filter(language="es").exists()
