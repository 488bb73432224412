"""The recorder's commit cut off mid-flight, on real workers and PostgreSQL.

The workers reach the database through a proxy that reads the wire protocol and cuts off
commits of call-log writes, alternately after the server applied them (the answer is lost with
the connection) and before they were sent (the server rolls back). Either way the worker only
sees its connection drop, and the recorder writes the batch again: nothing may be stored twice,
nothing may be lost, and no conversation may end done without its rows.
"""

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count, Sum

from evaluations.models import AnchorCoverage, Conversation, ConversationStatus, RunStatus
from llm.models import LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.test_run_recovery import (
    CALLS_PER_CONVERSATION,
    FAST_RECOVERY,
    HTTP_OUTCOMES,
    assert_exactly_once_with_exact_accounting,
    launch,
)
from tests.evaluations.test_run_worker import (  # noqa: F401 - _taxonomy is an autouse fixture
    _taxonomy,
    run_status,
    wait_for,
)
from tests.pg_commit_cutter import CommitCutter

pytestmark = [
    pytest.mark.worker,
    pytest.mark.faults,
    pytest.mark.skipif(
        "postgresql" not in settings.DATABASES["default"]["ENGINE"],
        reason="cuts the workers' PostgreSQL connections",
    ),
    pytest.mark.slow(reason="cuts a real worker's commits through a proxy"),
]

CUTS = 4
APPLIED = "a commit that reported failure had applied"
RETRIED = "Writing a batch again"


@pytest.fixture
def cutter():
    db = connection.settings_dict
    proxy = CommitCutter((db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)), limit=CUTS)
    yield proxy.start()
    proxy.close()


def proxied_database_url(port: int) -> str:
    db = connection.settings_dict
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}127.0.0.1:{port}/{db['NAME']}?sslmode=disable"


def test_a_commit_cut_off_mid_flight_neither_loses_nor_doubles_a_row(
    celery_worker_factory, fake_openai, cutter
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.02
    # One anchor raised per conversation, so every conversation owns anchor-coverage rows.
    fake.anchor_reply = lambda request: {
        "anchors": [{"anchor": 1, "raised": True, "turn": 1, "quote": "user message 1"}]
    }
    worker = celery_worker_factory(
        concurrency=2,
        beat=True,
        extra_env={
            **FAST_RECOVERY,
            "ENGINE_FLUSH_SECONDS": "0.01",
            "DATABASE_URL": proxied_database_url(cutter.port),
        },
    )
    before = fake_openai.request_count
    billed_before = fake_openai.billed_tokens
    run = launch(fake, metrics=1)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=120, what="the run")
    print("\n".join(line for line in worker.log().splitlines() if "batch again" in line))
    # Both kinds of cut happened; the recorder wrote its cut batches again, and saw a commit
    # cut after applying for what it was. The counts of those lines are not the cuts': a cut
    # may fall on another write of the call log (a journal's replay, retried by its task), and
    # a batch cut before its commit may still hold attempts an earlier, applied cut left in it
    # (a failed batch is merged into the next), so its retry need not report "0 stored". The
    # rows below are the proof: what every cut rolled back was written again, exactly once.
    assert (cutter.cut_after, cutter.cut_before) == (CUTS // 2, CUTS // 2)
    assert worker.log().count(RETRIED) >= 1
    assert worker.log().count(APPLIED) >= 1
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
    assert logged.count() == answered >= 6 * CALLS_PER_CONVERSATION
    assert tokens["p"] + tokens["c"] == fake_openai.billed_tokens - billed_before
