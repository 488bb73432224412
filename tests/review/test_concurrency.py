"""Simultaneous raters on PostgreSQL: row locks with SKIP LOCKED keep every item at its target."""

import threading

import pytest
from django.db import connection, connections

from core.roles import Role
from review.models import QueueItem, Rating
from review.services import assignment_claim, rating_submit
from tests.factories import UserFactory

from .factories import metric_queue, synthetic_candidates

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="Needs PostgreSQL: SQLite serialises writers, so there are no concurrent claims "
        "to race (set DATABASE_URL to a PostgreSQL database to run this).",
    ),
]


@pytest.mark.slow(reason="raters claiming at once on PostgreSQL threads")
def test_simultaneous_raters_never_push_an_item_past_its_target():
    items, required, threads = 40, 3, 12
    queue = metric_queue(n=items, required=required, candidates=synthetic_candidates(items))
    team = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(threads)]
    start = threading.Barrier(threads)
    errors: list[BaseException] = []
    done_per_rater: dict[int, int] = {}

    def work(rater):
        try:
            start.wait()
            count = 0
            while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
                rating_submit(assignment=assignment, rater=rater, answers={"fidelity": "faithful"})
                count += 1
            done_per_rater[rater.pk] = count
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=work, args=(rater,)) for rater in team]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not errors, errors
    assert sum(done_per_rater.values()) == items * required
    assert not QueueItem.objects.filter(queue=queue).exclude(ratings_done=required).exists()
    assert Rating.objects.filter(queue=queue).count() == items * required
    # Several raters really worked in parallel rather than one taking everything.
    assert sum(1 for n in done_per_rater.values() if n) >= required


def test_a_rater_waits_for_an_item_being_claimed_instead_of_being_told_the_queue_is_done():
    """SKIP LOCKED passes over the rows other claims hold: when those are all the open items,
    the claim waits for them instead of answering "nothing left" while work remains."""
    import time

    import psycopg

    queue = metric_queue(n=1, required=2, candidates=synthetic_candidates(1))
    item = QueueItem.objects.get(queue=queue)
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    params = connection.settings_dict
    other = psycopg.connect(
        dbname=params["NAME"],
        user=params["USER"],
        host=params["HOST"] or None,
        port=params["PORT"] or None,
        password=params["PASSWORD"] or None,
    )
    # Another rater's claim holds the only item's row for a moment, then gives it up.
    other.execute("SELECT 1 FROM review_queueitem WHERE id = %s FOR UPDATE", [item.pk])
    releaser = threading.Timer(0.5, other.rollback)
    releaser.start()
    started = time.monotonic()
    try:
        assignment = assignment_claim(queue=queue, rater=rater)
    finally:
        releaser.join()
        other.close()
    assert assignment is not None
    assert assignment.item_id == item.pk
    assert time.monotonic() - started >= 0.4
