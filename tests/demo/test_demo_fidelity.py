"""A walk over the seeded demo run's fidelity readings: every conversation checked, and the
offline simulated user, which presses its hidden goal to the last turn, meets the bar."""

from collections import Counter

import pytest

from evaluations.models import CRITERION_FIELDS, Conversation, ConversationStatus, FidelityReading
from tests.demo.test_demo_evidence import _seed_demo_subset

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's offline run"),
    pytest.mark.embedded,
]


def test_every_demo_conversation_has_a_reading_and_the_offline_user_pursues_its_goal(
    monkeypatch,
):
    run = _seed_demo_subset(monkeypatch)
    completed = Conversation.objects.filter(run=run, status=ConversationStatus.COMPLETED)
    readings = list(FidelityReading.objects.filter(conversation__run=run))
    assert len(readings) == completed.count() > 0
    failed = Counter(
        criterion.value
        for reading in readings
        for criterion, field in CRITERION_FIELDS.items()
        if not getattr(reading, field)
    )
    examples = [
        (r.conversation_id, e["criterion"], e["quote"], e["reason"])
        for r in readings
        for e in r.criteria
        if not e["held"]
    ]
    print(len(readings), sum(r.passed for r in readings), dict(failed), examples[:6])
    assert all(r.is_offline and r.repeated_lines == 0 for r in readings)
    # The demo's user presses its hidden goal to the last turn and never steps out of its role.
    assert failed["goal"] == 0, (failed, examples)
    assert failed["in_character"] == 0, (failed, examples)
    assert sum(r.passed for r in readings) >= 0.9 * len(readings), (failed, examples)
