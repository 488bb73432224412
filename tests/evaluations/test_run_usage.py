"""A run's usage figures, as the live run page polls them: exact, and read without the call log.

The figures come from the running totals kept by triggers on the call log (`llm/0012`); here a
real run through the engine is compared with a fresh sum over its LLMCall rows, and the reads
behind the progress partial are shown not to touch `llm_llmcall` at all, at any run size.
"""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evaluations.selectors import run_progress, run_usage
from evaluations.services import runs
from evaluations.services.health import run_cost
from llm.bulk import calls_record_bulk
from llm.models import LLMCall
from tests.evaluations.factories import (
    EvaluationRunFactory,
    running_run,
)
from tests.evaluations.test_run_worker import _taxonomy  # noqa: F401 - a fixture (used by name)
from tests.fake_openai import Behaviour
from tests.llm.factories import ModelConfigurationFactory
from tests.llm.test_run_usage_totals import _prompt, fresh_sum, make_calls

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_a_real_run_reports_exactly_its_call_log(fake_models, settings):
    """Through the engine, with rate limits and retries: the totals are the log's sums."""
    settings.LLM_MAX_RETRIES = 3
    plain_target = fake_models.target_reply
    limited: set[str] = set()

    def sometimes_limited(request):
        # Each conversation's first target request is refused once with a 429.
        key = str(request.messages[0])
        if key not in limited:
            limited.add(key)
            return Behaviour(status=429)
        return plain_target(request)

    fake_models.target_reply = sometimes_limited
    run = running_run(fake_models, conversations=8, judgments=2)

    assert runs.run_process_inline(run_id=run.pk) == 8

    usage = run_usage(run_id=run.pk)
    logged = fresh_sum(run.pk)
    assert usage.attempts == logged.attempts == fake_models.server.request_count
    assert usage.rate_limited == logged.rate_limited > 0
    assert (usage.successes, usage.failures, usage.cache_hits) == (
        logged.successes,
        logged.failures,
        logged.cache_hits,
    )
    assert (usage.prompt_tokens, usage.completion_tokens) == (
        logged.prompt_tokens,
        logged.completion_tokens,
    )
    assert usage.cost == logged.cost > 0
    assert (usage.limit_wait_ms, usage.backoff_ms) == (logged.limit_wait_ms, logged.backoff_ms)
    assert run_cost(run.pk) == logged.cost
    # One item's figures are still its own rows, and the items add up to the run.
    items = set(LLMCall.objects.filter(run_id=run.pk).values_list("work_item", flat=True))
    assert sum(run_usage(run_id=run.pk, work_item=item).attempts for item in items) == (
        usage.attempts
    )


def test_the_progress_poll_reads_no_call_log_whatever_the_run_size():
    run = EvaluationRunFactory(status="running")
    configuration = ModelConfigurationFactory()
    calls_record_bulk(calls=make_calls(configuration, run_id=run.pk, n=20), prompts=_prompt())

    def poll() -> tuple[list[str], object]:
        with CaptureQueriesContext(connection) as queries:
            progress = run_progress(run=run)
        return [q["sql"] for q in queries.captured_queries], progress

    small, progress = poll()
    assert progress.usage.attempts == 20
    assert progress.cost == fresh_sum(run.pk).cost
    calls_record_bulk(
        calls=make_calls(configuration, run_id=run.pk, n=2000, seed=20), prompts=_prompt()
    )
    large, progress = poll()
    assert progress.usage.attempts == 2020
    assert progress.usage.successes == fresh_sum(run.pk).successes
    assert len(large) == len(small)
    assert not [sql for sql in small + large if "llm_llmcall" in sql]
    usage_reads = [sql for sql in large if "llm_runusagetotal" in sql]
    assert len(usage_reads) == 1, large


def test_the_totals_are_found_by_their_index():
    if connection.vendor != "postgresql":
        pytest.skip("the plan is PostgreSQL's")
    configuration = ModelConfigurationFactory()
    for run_id in range(1, 60):
        calls_record_bulk(
            calls=make_calls(configuration, run_id=run_id, n=3, seed=run_id * 3),
            prompts=_prompt(),
        )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ANALYZE llm_runusagetotal")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN SELECT * FROM llm_runusagetotal WHERE run_id = 7")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "llm_run_usage_shard" in plan, plan
