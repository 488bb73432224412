"""The recorder's commit cut off by a terminated connection, on real workers and PostgreSQL.

A thread in the test terminates every backend of this test's database caught committing
(`COMMIT` still active): the server may have applied the commit while the worker only sees its
connection drop. The recorder writes the batch again; nothing may be stored twice, nothing may
be lost, and no conversation may end done without its rows. Runs are repeated until the worker
reports a batch written again after a commit that had applied (the race this is about).
"""

import threading
import time

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count, Sum

from evaluations.models import AnchorCoverage, Conversation, ConversationStatus, RunStatus
from evaluations.services import runs
from llm.models import LLMCall
from tests.conftest import database_url_of_current_connection
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_run_recovery import (
    CALLS_PER_CONVERSATION,
    FAST_RECOVERY,
    HTTP_OUTCOMES,
    JUDGMENTS,
    TURNS,
    assert_exactly_once_with_exact_accounting,
)
from tests.evaluations.test_run_worker import (  # noqa: F401 - _taxonomy is an autouse fixture
    _taxonomy,
    release_with_scenarios,
    run_status,
    wait_for,
)

pytestmark = [
    pytest.mark.worker,
    pytest.mark.faults,
    pytest.mark.skipif(
        "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="terminates the workers' PostgreSQL connections",
    ),
]

MAX_RUNS = 4
CUTS_PER_RUN = 6
APPLIED = "the failed commit had applied"
TERMINATE_COMMITTING = """
    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %s
      AND state = 'active' AND query = 'COMMIT'
"""


class CommitTerminator(threading.Thread):
    """Terminates this database's backends caught in COMMIT, until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        # The test's own connection is spared: only the workers' commits are cut off.
        connection.ensure_connection()
        self.spared = connection.connection.info.backend_pid
        self.url = database_url_of_current_connection()
        self.stopped = threading.Event()
        self.terminated = 0

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stopped.is_set() and self.terminated < CUTS_PER_RUN:
                cut = conn.execute(TERMINATE_COMMITTING, (self.spared,)).fetchone()[0]
                self.terminated += cut
                # After a cut, time for the worker to reconnect and move on.
                time.sleep(0.5 if cut else 0.001)

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=10)


def test_a_commit_cut_off_mid_flight_neither_loses_nor_doubles_a_row(
    celery_worker_factory, fake_openai
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.02
    # One anchor raised per conversation, so every conversation owns anchor-coverage rows.
    fake.anchor_reply = lambda request: {
        "anchors": [{"anchor": 1, "raised": True, "turn": 1, "quote": "user message 1"}]
    }
    worker = celery_worker_factory(
        concurrency=2, beat=True, extra_env={**FAST_RECOVERY, "ENGINE_FLUSH_SECONDS": "0.01"}
    )
    release = release_with_scenarios(1)
    hit = False
    for attempt in range(1, MAX_RUNS + 1):
        before = fake_openai.request_count
        billed_before = fake_openai.billed_tokens
        run = runs.run_launch(
            run=runs.run_create(
                name=f"Cut commits {attempt}",
                release=release,
                targets=[fake.target],
                simulator=fake.simulator,
                judge=fake.judge,
                turns=TURNS,
                judgments_per_conversation=JUDGMENTS,
                typo_rate=0.0,
            )
        )
        terminator = CommitTerminator()
        terminator.start()
        try:
            wait_for(
                lambda run=run: run_status(run) == RunStatus.COMPLETED, timeout=120, what="the run"
            )
        finally:
            terminator.stop()
        assert_exactly_once_with_exact_accounting(run, fake, conversations=6)
        conversations = Conversation.objects.filter(run=run)
        # No conversation is complete without its anchor-coverage rows.
        covered = conversations.annotate(n=Count("anchor_coverage")).filter(n=0)
        assert not covered.filter(status=ConversationStatus.COMPLETED).exists()
        assert AnchorCoverage.objects.filter(conversation__run=run).count() >= 6
        # The call log holds exactly what the endpoint answered, and costs what it billed.
        answered = fake_openai.request_count - before
        logged = LLMCall.objects.filter(run_id=run.pk, outcome__in=HTTP_OUTCOMES)
        tokens = logged.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
        print(
            f"run {attempt}: {terminator.terminated} commits cut off, endpoint answered "
            f"{answered}, call log holds {logged.count()}"
        )
        assert logged.count() == answered >= 6 * CALLS_PER_CONVERSATION
        assert tokens["p"] + tokens["c"] == fake_openai.billed_tokens - billed_before
        if APPLIED in worker.log() and terminator.terminated:
            hit = True
            break
    print("\n".join(line for line in worker.log().splitlines() if "batch again" in line))
    assert hit, f"no commit was cut off after applying in {MAX_RUNS} runs"
