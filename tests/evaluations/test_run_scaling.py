"""What the run page reads on every poll is found by index, whatever the size of the run.

The run page counts and lists the conversations whose judges quoted evidence missing from the
transcript. Those are few; without an index of their own the count read every conversation of
the run (`benchmarks/run_size.py` measures the page at 400 and 4,000 conversations).
"""

import pytest
from django.db import connection, transaction

from evaluations.models import Conversation, RunStatus
from evaluations.selectors import run_unverified_conversations

from .factories import ConversationFactory, EvaluationRunFactory


def _plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_unverified_conversations_of_a_run_are_read_from_their_own_index():
    if connection.vendor != "postgresql":
        pytest.skip("the plan is PostgreSQL's")
    run = EvaluationRunFactory(status=RunStatus.RUNNING)
    first = ConversationFactory(run=run, unverified_evidence=True)
    Conversation.objects.bulk_create(
        Conversation(run=run, scenario=first.scenario, target=first.target, replicate=r)
        for r in range(1, 500)
    )
    with transaction.atomic(), connection.cursor() as cursor:
        # A small table is cheapest read whole whatever its indexes: with sequential scans
        # priced out and fresh statistics, the plan shows which index serves the query.
        cursor.execute("ANALYZE evaluations_conversation")
        cursor.execute("SET LOCAL enable_seqscan = off")
        count_plan = _plan(run_unverified_conversations(run).values("pk"))
        list_plan = _plan(run_unverified_conversations(run)[:20])
    assert "conversation_run_unverified" in count_plan, count_plan
    assert "conversation_run_unverified" in list_plan, list_plan
    assert [c.unverified_evidence for c in run_unverified_conversations(run)] == [True]
