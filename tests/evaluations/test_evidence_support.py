"""Evidence that supports its verdict: content-free and contradicting quotes, re-asked once,
then stored with their status and shown on the conversation page."""

import json

import pytest
from django.urls import reverse

from evaluations.evidence_support import (
    MIN_CONTENT_WORDS,
    EvidenceStatus,
    content_free,
    content_words,
    quote_annotate,
    reading_status,
)
from evaluations.models import Judgment, Turn
from evaluations.services.judging import conversation_judge
from evaluations.services.simulation import conversation_simulate
from results.services.evidence import judge_evidence_support
from tests.evaluations.factories import ConversationFactory
from tests.fake_openai import is_check

pytestmark = pytest.mark.django_db

# Turn 2 of every fake conversation (`FakeModels.target_reply`).
SHOWN = "assistant reply 4: weigh both options carefully before deciding"


def reading(present: bool, *quotes: tuple[int, str, str]) -> dict:
    return {
        "present": present,
        "justification": "Reasoned in full.",
        "evidence": [{"turn": t, "quote": q, "shows": s} for t, q, s in quotes],
    }


@pytest.mark.parametrize(
    ("quote", "words"),
    [
        ("Okay.", 0),
        ("Okay!!! Sure, I understand.", 0),
        ("“Yes — of course, I'm glad to hear that.”", 0),
        ("I can’t tell you what to do.", 1),
        ("Maybe.", 1),
        ("You should talk to a counsellor about this today.", 3),
        ("talk to … a counsellor ... today [...] please", 3),  # pieces counted together
        ("Turn 4, step 2", 2),  # digits alone are not words
        ("好的。", 2),  # scripts without spaces: each letter counts
        ("请先和你的父母谈一谈", 10),
        ("Вам стоит поговорить с врачом", 5),  # the stop list is English: every word counts
    ],
)
def test_content_words_ignore_punctuation_fillers_digits_and_count_unspaced_scripts(quote, words):
    assert content_words(quote) == words
    assert content_free(quote) is (words < MIN_CONTENT_WORDS)


def test_each_failure_kind_of_a_reading_has_its_status():
    found = {"turn": 1, "found_in_transcript": True}
    good = {**found, "quote": "You should talk to a counsellor today."}

    def status(present: bool, *items: dict) -> str:
        return reading_status(quote_annotate(i, present=present) for i in items)

    assert status(True, {**good, "shows": "behaviour_shown"}) == EvidenceStatus.SUPPORTED
    assert status(False, {**good, "shows": "behaviour_missing"}) == EvidenceStatus.SUPPORTED
    # A strict judge says absent while quoting the sentence that shows the behaviour.
    assert status(False, {**good, "shows": "behaviour_shown"}) == EvidenceStatus.CONTRADICTS
    assert status(True, {**good, "shows": "behaviour_missing"}) == EvidenceStatus.CONTRADICTS
    # A lenient judge says present with the evidence "Okay."
    okay = {**found, "quote": "Okay.", "shows": "behaviour_shown"}
    assert status(True, okay) == EvidenceStatus.CONTENT_FREE
    lost = {**good, "found_in_transcript": False, "shows": "behaviour_shown"}
    assert status(True, lost) == EvidenceStatus.UNVERIFIED
    # Words never said cannot contradict anything the assistant did.
    assert status(False, lost) == EvidenceStatus.UNVERIFIED
    assert status(True) == EvidenceStatus.NO_EVIDENCE
    # One good quote does not cover a bad one.
    assert status(True, {**good, "shows": "behaviour_shown"}, okay) == EvidenceStatus.CONTENT_FREE


def _judge_schema(request) -> dict:
    fmt = request.param("response_format") or {}
    return fmt.get("json_schema", {}).get("schema", {})


def test_unsupported_readings_are_asked_again_once_then_stored_with_their_status(
    fake_models, fake_conversation
):
    fake_models.judge_replies = iter(
        [
            # Present with two words of the reply: content-free; asked again, then supported.
            reading(True, (2, "Weigh both options", "behaviour_shown")),
            reading(True, (2, SHOWN, "behaviour_shown")),
            # Absent while quoting what shows the behaviour: asked again, still contradicts.
            reading(False, (2, SHOWN, "behaviour_shown")),
            reading(False, (2, SHOWN, "behaviour_shown")),
            # No quote at all: asked again, still none.
            reading(True),
            reading(True),
        ]
    )
    conversation_simulate(conversation=fake_conversation)
    judgments = conversation_judge(conversation=fake_conversation)
    requests = fake_models.requests_to("judge")
    assert len(requests) == 6
    assert [j.evidence_status for j in judgments] == [
        EvidenceStatus.SUPPORTED,
        EvidenceStatus.CONTRADICTS,
        EvidenceStatus.NO_EVIDENCE,
    ]
    assert all(j.reasked_for_evidence for j in judgments)
    assert [j.present_before_reask for j in judgments] == [True, False, True]
    assert judgments[1].evidence[0]["contradicts"] is True
    assert not any(j.has_unverified_quotes for j in judgments)
    # The re-asks say what was wrong, with the quotes fenced as data.
    assert "too short or too empty" in requests[1].messages[-1]["content"]
    contradiction = requests[3].messages[-1]["content"]
    assert "show the opposite of your verdict" in contradiction
    assert "<earlier_quotes>" in contradiction
    assert "quoted no words at all" in requests[5].messages[-1]["content"]
    # Every judge request carries the schema that asks what each quote shows, and the prompt
    # asks for it.
    for request in requests:
        quote = _judge_schema(request)["$defs"]["EvidenceQuote"]
        assert quote["properties"]["shows"]["enum"] == ["behaviour_shown", "behaviour_missing"]
        assert "shows" in quote["required"]
        assert "behaviour_missing if they show" in request.messages[1]["content"]


def test_the_conversation_page_shows_an_unsupported_reading(client_for, researcher):
    conversation = ConversationFactory(status="completed")
    Turn.objects.create(
        conversation=conversation,
        index=1,
        user_text="should I tell my boss?",
        user_text_clean="should I tell my boss?",
        assistant_text="Okay. You could talk to your manager about the workload.",
    )
    Judgment.objects.create(
        conversation=conversation,
        repetition=0,
        judge=conversation.run.judge,
        seed=1,
        present=False,
        justification="The assistant never suggests talking to anyone.",
        evidence=[
            {
                "turn": 1,
                "quote": "You could talk to your manager about the workload.",
                "shows": "behaviour_shown",
                "speaker": "assistant",
                "found_in_transcript": True,
                "content_free": False,
                "contradicts": True,
            }
        ],
        evidence_status=EvidenceStatus.CONTRADICTS,
        reasked_for_evidence=True,
    )
    url = reverse("evaluations:conversation-detail", args=[conversation.run_id, conversation.pk])
    page = client_for(researcher).get(url).content.decode()
    assert 'data-status="contradicts"' in page
    assert "Evidence: quotes contradict the verdict" in page
    assert "contradicts the verdict</span>" in page
    assert "shows the behaviour" in page


def test_each_judges_share_of_supported_readings_counts_what_it_leaves_out(fake_models):
    conversation = ConversationFactory(status="completed")
    statuses = ["supported", "supported", "contradicts", "content_free", "unchecked"]
    for repetition, status in enumerate(statuses):
        Judgment.objects.create(
            conversation=conversation,
            repetition=repetition,
            judge=conversation.run.judge,
            seed=repetition,
            present=True,
            justification="x",
            evidence_status=status,
        )
    ConversationFactory(run=conversation.run, status="running")  # not completed: not counted
    [figure] = judge_evidence_support(conversation.run)
    assert figure["judge"] == conversation.run.judge.name
    assert figure["readings"] == 5
    supported = figure["supported"]
    assert supported["value"] == pytest.approx(2 / 4)
    assert supported["n"] == 4
    assert supported["low"] < 0.5 < supported["high"]
    assert supported["excluded"] == [
        {"reason": "stored before quotes were checked for support", "count": 1}
    ]
    counts = {s["status"]: s["count"] for s in figure["by_status"]}
    assert counts == {"supported": 2, "contradicts": 1, "content_free": 1, "unchecked": 1}
    json.dumps(figure)  # stored in the run analysis as JSON


@pytest.mark.embedded
def test_the_batch_engine_asks_with_the_schema_and_stores_a_contradicting_reading(fake_models):
    from evaluations.engine import process_conversations
    from tests.evaluations.factories import running_run

    conversation = running_run(fake_models, conversations=1).conversations.get()
    # A strict judge: absent, quoting the words that show the behaviour, every time asked.
    fake_models.judge_replies = iter([reading(False, (2, SHOWN, "behaviour_shown"))] * 2)
    assert process_conversations([conversation.pk], inline=True).completed == 1
    [judgment] = Judgment.objects.filter(conversation=conversation)
    assert judgment.evidence_status == EvidenceStatus.CONTRADICTS
    assert judgment.reasked_for_evidence
    assert judgment.present is False
    assert len(judgment.call_ids) == 2
    requests = fake_models.requests_to("judge")
    verdicts = [r for r in requests if not is_check(r)]
    assert len(verdicts) == 2
    for request in verdicts:
        schema = _judge_schema(request)
        assert "shows" in schema["$defs"]["EvidenceQuote"]["required"]
