"""The batch engine in this process: exact accounting, bounded queries, resuming, fencing."""

import itertools
import json
import logging
import os
import socket

import pytest
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from evaluations.engine import journal, process_conversations
from evaluations.models import Conversation, ConversationStatus, FailureKind, Judgment, Turn
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall, LLMResponseCache, PromptText
from tests.evaluations.factories import (
    EvaluationRunFactory,
    ScenarioFactory,
    running_run,
)
from tests.evaluations.test_run_worker import _taxonomy  # noqa: F401 - a fixture (used by name)
from tests.fake_openai import Behaviour

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _run(fake_models, *, conversations: int, turns: int = 3, judgments: int = 3, **fields):
    return running_run(
        fake_models, conversations=conversations, turns=turns, judgments=judgments, **fields
    )


def _shapes(run) -> set[tuple[str, int, int]]:
    rows = Conversation.objects.filter(run=run).annotate(
        n_turns=Count("turns", distinct=True), n_judgments=Count("judgments", distinct=True)
    )
    return {(c.status, c.n_turns, c.n_judgments) for c in rows}


def test_every_conversation_is_done_or_failed_and_every_attempt_is_logged(fake_models, settings):
    """Flaky replies are retried; a simulator that never answers valid JSON fails with a reason."""
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_BACKOFF_BASE_SECONDS = 0.001
    seen: set[str] = set()
    malformed: list[str] = []
    plain_target = fake_models.target_reply

    def flaky(request):
        # The first time each conversation asks for its second reply: a 200 without choices.
        key = json.dumps([request.messages, request.param("seed")])
        if request.messages[-1]["content"] == "user message 2" and key not in seen:
            seen.add(key)
            malformed.append(key)
            return Behaviour(malformed="no_choices")
        return plain_target(request)

    fake_models.target_reply = flaky
    run = _run(fake_models, conversations=12)
    broken = Conversation.objects.filter(run=run).order_by("pk").last()
    plain_simulator = fake_models.simulator_reply

    def simulator(request, index):
        # The broken conversation's simulator writes prose: re-asked, then it fails.
        if f"seed-of-{broken.pk}" in str(request.messages[0]):
            return {"message": ["not", "a", "text"]}
        return plain_simulator(request, index)

    fake_models.simulator_reply = simulator
    # The broken one gets its own scenario so only its simulator prompt carries the marker.
    marked = ScenarioFactory(situation=f"seed-of-{broken.pk}")
    Conversation.objects.filter(pk=broken.pk).update(scenario=marked)

    processed = runs.run_process_inline(run_id=run.pk)

    assert processed == 12
    assert _shapes(run) == {(ConversationStatus.COMPLETED, 3, 3), (ConversationStatus.FAILED, 0, 0)}
    broken.refresh_from_db()
    assert broken.status == ConversationStatus.FAILED
    assert broken.failure_kind == FailureKind.SIMULATOR_ERROR
    assert "did not return a valid SimulatedUserTurn" in broken.error
    run.refresh_from_db()
    assert (run.conversations_completed, run.conversations_failed) == (11, 1)
    # Every HTTP attempt is one row of the call log (no cache hit could occur: fresh seeds).
    calls = LLMCall.objects.filter(run_id=run.pk)
    assert calls.count() == fake_models.server.request_count
    assert calls.filter(outcome=CallOutcome.MALFORMED).count() == len(malformed) == 11
    assert calls.filter(outcome=CallOutcome.CACHED).count() == 0
    # Turns and judgments point at their recorded calls; prompts are stored once each.
    for turn in Turn.objects.filter(conversation__run=run):
        assert turn.simulator_call_ids
        assert turn.target_call_ids
        assert set(calls.filter(pk__in=turn.target_call_ids).values_list("purpose", flat=True)) == {
            "evaluations.target_reply"
        }
    assert all(j.call_ids for j in Judgment.objects.filter(conversation__run=run))
    assert not calls.filter(prompt__isnull=True).exists()
    assert PromptText.objects.count() == calls.values("prompt").distinct().count()
    first = calls.filter(purpose="evaluations.target_reply").order_by("pk").first()
    assert first.prompt_messages[-1] == {"role": "user", "content": "user message 1"}
    # Successful replies are in the cache, written in bulk.
    assert LLMResponseCache.objects.count() == calls.filter(outcome=CallOutcome.SUCCESS).count()


@pytest.mark.slow(reason="runs conversations of two lengths to compare their queries")
def test_queries_per_conversation_do_not_grow_with_its_calls(fake_models, settings):
    # Only the flushes a conversation needs (before it is marked simulated and done), so the
    # count does not depend on how long the batch took.
    settings.ENGINE_FLUSH_SECONDS = 60
    # One call at a time: conversations then finish one by one, each with its own flushes. At
    # full concurrency, whether two conversations finish together and share a flush depends on
    # timing, and the count with it (87 or 133 queries for the same run).
    settings.ENGINE_CONCURRENCY = 1
    # No lease renewal either: the heartbeat renews a third of a lease apart (20 s by default),
    # and a loaded machine stretching the 8-turn batch past that added one query (480 against 481).
    settings.RUN_CLAIM_LEASE_SECONDS = 3600
    # Nor permit renewal: a pool renews its request permits a third of a permit lease apart
    # (LLM_TIMEOUT_SECONDS + 30 s, about 12 s here), one more query when the batch runs longer.
    settings.LLM_TIMEOUT_SECONDS = 3600
    counted = {}
    for turns in (2, 8):
        # A seed of its own: no cache lookup can hit, so none is made.
        run = _run(fake_models, conversations=10, turns=turns, judgments=3, seed=1000 + turns)
        ids = list(Conversation.objects.filter(run=run).values_list("pk", flat=True))
        with CaptureQueriesContext(connection) as queries:
            report = process_conversations(ids, inline=True)
        assert report.completed == 10
        calls = LLMCall.objects.filter(run_id=run.pk).count()
        assert calls == 10 * (2 * turns + 1 + 1 + 3)  # + the anchor and fidelity checks
        counted[turns] = len(queries)
    # About 28 per conversation (claim, load, mark simulated, finalize, savepoints) and ~11 for
    # each of the two bulk flushes it needs: bounded whatever its length, and with calls one
    # at a time exactly the same for 8 turns (210 calls) as for 2 (90).
    assert max(counted.values()) <= 10 * 55, counted
    assert counted[8] == counted[2], counted


def test_a_redelivered_batch_writes_nothing_twice_and_repeats_no_stored_call(fake_models):
    run = _run(fake_models, conversations=4, turns=3, judgments=3)
    ids = list(Conversation.objects.filter(run=run).values_list("pk", flat=True))
    process_conversations(ids, inline=True)
    sent = fake_models.server.request_count
    # A delivery that died after writing every row but before marking one done.
    crashed = ids[0]
    Conversation.objects.filter(pk=crashed).update(
        status=ConversationStatus.RUNNING, lease_expires_at=None
    )
    runs.EvaluationRun.objects.filter(pk=run.pk).update(status="running", conversations_completed=3)
    report = process_conversations(ids, inline=True)
    assert (report.completed, report.skipped) == (1, 3)
    assert fake_models.server.request_count == sent  # nothing asked again
    assert _shapes(run) == {(ConversationStatus.COMPLETED, 3, 3)}
    run.refresh_from_db()
    assert run.conversations_completed == 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("_taxonomy")
def test_a_conversation_whose_claim_is_taken_over_stops_without_writing(fake_models):
    run = _run(fake_models, conversations=2, turns=4, judgments=1)
    first, second = Conversation.objects.filter(run=run).order_by("pk")
    fake_models.server.latency = 0.02

    def takeover(request):
        # Another delivery claims the first conversation while its second turn is asked.
        if '"content": "user message 2"' in str(request.messages).replace("'", '"'):
            Conversation.objects.filter(pk=first.pk).update(attempts=99)
            connection.close()  # the server thread's own connection
        return f"assistant reply {len(request.messages)}"

    fake_models.target_reply = takeover
    # The fake server writes from its own thread, while this one holds SQLite's write lock.
    if connection.vendor == "sqlite":
        pytest.skip("the takeover writes from the server thread (needs PostgreSQL)")
    process_conversations([first.pk, second.pk], inline=True)
    assert Turn.objects.filter(conversation=second).count() == 4
    assert Turn.objects.filter(conversation=first).count() < 4
    first.refresh_from_db()
    assert (first.status, first.attempts) == (ConversationStatus.RUNNING, 99)


def test_a_journal_that_cannot_be_written_loses_no_row_and_stops_no_run(
    fake_models, settings, tmp_path, monkeypatch, caplog
):
    """Every journal file this run opens is /dev/full (each write fails with ENOSPC, as on a
    full disk): the engine says so once per batch and records every attempt without it."""
    settings.ENGINE_JOURNAL_DIR = str(tmp_path)
    settings.ENGINE_BATCH_SIZE = 2
    monkeypatch.setattr(journal, "_numbers", itertools.count(1))
    folder = journal.journal_dir()
    folder.mkdir(parents=True)
    for number in range(1, 51):
        name = f"{socket.gethostname()}-{os.getpid()}-{journal._instance}-{number}.jsonl"
        (folder / name).symlink_to("/dev/full")
    run = _run(fake_models, conversations=4, turns=2, judgments=1)

    with caplog.at_level(logging.WARNING, logger="evaluations.engine.journal"):
        processed = runs.run_process_inline(run_id=run.pk)

    assert processed == 4
    assert _shapes(run) == {(ConversationStatus.COMPLETED, 2, 1)}
    http = LLMCall.objects.filter(run_id=run.pk).exclude(outcome=CallOutcome.CACHED)
    assert http.count() == fake_models.server.request_count
    assert not http.filter(outcome=CallOutcome.UNKNOWN).exists()
    stopped = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    batches = next(journal._numbers) - 1
    assert batches >= 2
    assert len(stopped) == batches  # once per batch, not once per attempt
    assert "No space left on device" in stopped[0].getMessage()


def test_a_run_made_with_a_deleted_runs_id_is_not_taken_for_it():
    """The per-process memory of runs whose seed is their own outlives the run; SQLite gives a
    deleted run's id to the next run made, which must be asked about afresh."""
    from evaluations.engine.loading import run_seed_is_unique

    first = EvaluationRunFactory(seed=5)
    assert run_seed_is_unique(first)
    pk = first.pk
    first.delete()
    EvaluationRunFactory(seed=7)
    reused = EvaluationRunFactory(pk=pk, seed=7)
    assert not run_seed_is_unique(reused)
