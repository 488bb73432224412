"""Both conversation pages say when judge readings kept evidence that does not support their
verdict, counted per kind of problem (not only quotes missing from the transcript)."""

import pytest
from django.urls import reverse

from evaluations.evidence_support import EvidenceStatus, evidence_problems
from evaluations.models import Judgment
from tests.evaluations.factories import ConversationFactory

pytestmark = pytest.mark.django_db


def _reading(conversation, repetition: int, status: str) -> Judgment:
    return Judgment.objects.create(
        conversation=conversation,
        repetition=repetition,
        judge=conversation.run.judge,
        seed=repetition,
        present=True,
        justification="Read in full sentences.",
        evidence=[],
        evidence_status=status,
    )


def test_problems_are_counted_per_status_in_order_and_supported_ones_are_not():
    readings = [
        Judgment(evidence_status=s)
        for s in ("content_free", "supported", "contradicts", "unchecked", "contradicts")
    ]
    assert evidence_problems(readings) == [
        (EvidenceStatus.CONTRADICTS.label, 2),
        (EvidenceStatus.CONTENT_FREE.label, 1),
    ]
    assert evidence_problems([Judgment(evidence_status="supported")]) == []


@pytest.mark.parametrize("page", ["workspace", "public"])
def test_the_pages_name_every_kind_of_unsupported_evidence(client_for, researcher, page):
    conversation = ConversationFactory(status="completed", verdict_present=True)
    _reading(conversation, 0, EvidenceStatus.CONTRADICTS)
    _reading(conversation, 1, EvidenceStatus.CONTENT_FREE)
    _reading(conversation, 2, EvidenceStatus.SUPPORTED)
    url = (
        reverse("evaluations:conversation-detail", args=[conversation.run_id, conversation.pk])
        if page == "workspace"
        else reverse("results:conversation", args=[conversation.pk])
    )
    html = client_for(researcher).get(url).content.decode()
    assert 'data-testid="evidence-problems"' in html
    assert f"1 reading: {EvidenceStatus.CONTRADICTS.label}" in html
    assert f"1 reading: {EvidenceStatus.CONTENT_FREE.label}" in html
    assert html.count('data-testid="evidence-status"') == 2

    clean = ConversationFactory(status="completed", verdict_present=True)
    _reading(clean, 0, EvidenceStatus.SUPPORTED)
    url = url.replace(str(conversation.pk), str(clean.pk)).replace(
        f"runs/{conversation.run_id}/", f"runs/{clean.run_id}/"
    )
    assert 'data-testid="evidence-problems"' not in client_for(researcher).get(url).content.decode()
