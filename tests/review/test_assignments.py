from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.exceptions import ApplicationError
from core.roles import Role
from review.models import Assignment, AssignmentStatus, QueueItem, Rating, RatingDraft
from review.services import (
    assignment_claim,
    assignment_skip,
    queue_set_status,
    rating_draft_save,
    rating_submit,
    rating_undo_last,
)
from tests.factories import UserFactory

from .factories import metric_queue, synthetic_candidates

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

FAITHFUL = {"fidelity": "faithful"}


def raters(n: int) -> list:
    return [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(n)]


def rate(queue, rater, answers=FAITHFUL):
    assignment = assignment_claim(queue=queue, rater=rater)
    if assignment is None:
        return None
    return rating_submit(assignment=assignment, rater=rater, answers=answers)


def test_a_rater_holds_one_item_at_a_time_and_gets_it_back_on_reload():
    queue = metric_queue(n=3, candidates=synthetic_candidates(3))
    (rater,) = raters(1)
    first = assignment_claim(queue=queue, rater=rater)
    again = assignment_claim(queue=queue, rater=rater)
    assert first.pk == again.pk
    assert QueueItem.objects.get(pk=first.item_id).claims_open == 1


def test_every_item_reaches_exactly_its_required_distinct_raters():
    queue = metric_queue(n=4, required=3, candidates=synthetic_candidates(4))
    team = raters(5)
    submitted = 0
    progress = True
    while progress:
        progress = False
        for rater in team:
            if rate(queue, rater) is not None:
                submitted += 1
                progress = True
    assert submitted == 12
    for item in queue.items.all():
        assert item.ratings_done == 3
        assert item.claims_open == 0
        assert item.completed_at is not None
        assert item.ratings.values("rater").distinct().count() == 3
    assert all(assignment_claim(queue=queue, rater=r) is None for r in team)


def test_nobody_gets_their_own_submission():
    author = UserFactory(roles=[Role.EXPERT_REVIEWER, Role.CONTRIBUTOR])
    queue = metric_queue(n=2, candidates=synthetic_candidates(2, owner_id=author.pk))
    assert assignment_claim(queue=queue, rater=author) is None


def test_claims_follow_the_queue_eligibility():
    group = Group.objects.create(name="Youth clinicians")
    member, named, outsider = raters(3)
    member.groups.add(group)
    panel = UserFactory()  # external panel member without the expert role
    queue = metric_queue(n=2, candidates=synthetic_candidates(2), eligible_group=group)
    named_queue = metric_queue(
        n=2,
        candidates=synthetic_candidates(2),
        eligible_raters=[panel],
        external_panel=True,
        name="Panel",
    )
    open_queue = metric_queue(n=2, candidates=synthetic_candidates(2), name="Open")
    assert assignment_claim(queue=queue, rater=member) is not None
    assert assignment_claim(queue=named_queue, rater=panel) is not None
    assert assignment_claim(queue=open_queue, rater=named) is not None
    for q, user in ((queue, outsider), (named_queue, named), (open_queue, panel)):
        with pytest.raises(ApplicationError, match="not one of the raters"):
            assignment_claim(queue=q, rater=user)


def test_a_closed_queue_hands_out_nothing():
    queue = metric_queue(n=2, candidates=synthetic_candidates(2))
    queue_set_status(queue=queue, status="closed")
    with pytest.raises(ApplicationError):
        assignment_claim(queue=queue, rater=raters(1)[0])


def test_skipped_items_go_to_others_and_never_back_to_the_skipper():
    queue = metric_queue(n=1, required=1, candidates=synthetic_candidates(1))
    a, b = raters(2)
    assignment = assignment_claim(queue=queue, rater=a)
    assignment_skip(assignment=assignment, rater=a)
    assert assignment_claim(queue=queue, rater=a) is None
    assert assignment_claim(queue=queue, rater=b).item_id == assignment.item_id


def test_an_abandoned_claim_returns_to_the_queue_after_its_timeout():
    queue = metric_queue(n=1, required=1, candidates=synthetic_candidates(1))
    a, b = raters(2)
    stale = assignment_claim(queue=queue, rater=a)
    assert assignment_claim(queue=queue, rater=b) is None
    Assignment.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(1))
    taken = assignment_claim(queue=queue, rater=b)
    assert taken.item_id == stale.item_id
    stale.refresh_from_db()
    assert stale.status == AssignmentStatus.EXPIRED
    # The slow rater comes back: the item is full, their answer is refused, nothing overflows.
    with pytest.raises(ApplicationError, match="ran out"):
        rating_submit(assignment=stale, rater=a, answers=FAITHFUL)
    rating_submit(assignment=taken, rater=b, answers=FAITHFUL)
    item = QueueItem.objects.get(pk=taken.item_id)
    assert (item.ratings_done, item.claims_open) == (1, 0)


def test_a_late_submission_counts_while_the_item_still_has_room():
    queue = metric_queue(n=1, required=2, candidates=synthetic_candidates(1))
    (a,) = raters(1)
    stale = assignment_claim(queue=queue, rater=a)
    Assignment.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(1))
    from review.services import assignment_expire_stale

    assert assignment_expire_stale(queue=queue) == 1
    rating_submit(assignment=stale, rater=a, answers=FAITHFUL)
    item = QueueItem.objects.get(pk=stale.item_id)
    assert (item.ratings_done, item.claims_open) == (1, 0)


def test_answers_are_validated_for_the_kind():
    queue = metric_queue(n=1, candidates=synthetic_candidates(1))
    (a,) = raters(1)
    assignment = assignment_claim(queue=queue, rater=a)
    with pytest.raises(ApplicationError, match="Answer"):
        rating_submit(assignment=assignment, rater=a, answers={})
    with pytest.raises(ApplicationError, match="not a choice"):
        rating_submit(assignment=assignment, rater=a, answers={"fidelity": "great"})
    with pytest.raises(ApplicationError, match="Unknown questions"):
        rating_submit(assignment=assignment, rater=a, answers={**FAITHFUL, "model": "x"})
    assert not Rating.objects.exists()


def test_a_rating_cannot_be_submitted_twice_or_by_someone_else():
    queue = metric_queue(n=1, candidates=synthetic_candidates(1))
    a, b = raters(2)
    assignment = assignment_claim(queue=queue, rater=a)
    with pytest.raises(ApplicationError, match="not assigned to you"):
        rating_submit(assignment=assignment, rater=b, answers=FAITHFUL)
    rating_submit(assignment=assignment, rater=a, answers=FAITHFUL)
    with pytest.raises(ApplicationError, match="already finished"):
        rating_submit(assignment=assignment, rater=a, answers=FAITHFUL)


def test_undo_reopens_the_item_for_the_same_rater_with_their_answers():
    queue = metric_queue(n=2, required=1, candidates=synthetic_candidates(2))
    a, b = raters(2)
    rating = rate(queue, a, {"fidelity": "partly"})
    next_one = assignment_claim(queue=queue, rater=a)
    assignment = rating_undo_last(queue=queue, rater=a)
    assert assignment.pk == rating.assignment_id
    assert assignment.status == AssignmentStatus.CLAIMED
    rating.refresh_from_db()
    assert rating.undone
    assert RatingDraft.objects.get(assignment=assignment).answers == {"fidelity": "partly"}
    item = QueueItem.objects.get(pk=rating.item_id)
    assert (item.ratings_done, item.claims_open, item.completed_at) == (0, 1, None)
    # The item the rater had moved on to is free again; the undone one is still theirs.
    assert assignment_claim(queue=queue, rater=b).item_id == next_one.item_id
    assert assignment_claim(queue=queue, rater=a).pk == assignment.pk
    rating_submit(assignment=assignment, rater=a, answers=FAITHFUL)
    assert Rating.objects.current().get(item=item).answers == FAITHFUL


def test_undo_is_limited_to_a_window(settings):
    settings.REVIEW_UNDO_WINDOW_SECONDS = 60
    queue = metric_queue(n=1, required=1, candidates=synthetic_candidates(1))
    (a,) = raters(1)
    with pytest.raises(ApplicationError, match="no rating"):
        rating_undo_last(queue=queue, rater=a)
    rating = rate(queue, a)
    Rating.objects.filter(pk=rating.pk).update(submitted_at=timezone.now() - timedelta(minutes=2))
    with pytest.raises(ApplicationError, match="can no longer be undone"):
        rating_undo_last(queue=queue, rater=a)


def test_drafts_keep_valid_partial_answers_and_renew_the_claim():
    queue = metric_queue(n=1, candidates=synthetic_candidates(1))
    (a,) = raters(1)
    assignment = assignment_claim(queue=queue, rater=a)
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() + timedelta(seconds=5)
    )
    draft = rating_draft_save(
        assignment=assignment,
        rater=a,
        answers={"fidelity": "partly", "bogus": "x"},
        comment="Criterion narrower than the source.",
    )
    assert draft.answers == {"fidelity": "partly"}
    assignment.refresh_from_db()
    assert assignment.expires_at > timezone.now() + timedelta(minutes=29)
    rating_submit(assignment=assignment, rater=a, answers=FAITHFUL)
    assert not RatingDraft.objects.exists()
    with pytest.raises(ApplicationError, match="finished"):
        rating_draft_save(assignment=assignment, rater=a, answers={})


def test_the_database_refuses_an_over_assigned_item():
    queue = metric_queue(n=1, required=2, candidates=synthetic_candidates(1))
    item = queue.items.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        QueueItem.objects.filter(pk=item.pk).update(ratings_done=2, claims_open=1)


def test_the_database_refuses_a_second_assignment_of_one_rater_to_an_item():
    queue = metric_queue(n=1, candidates=synthetic_candidates(1))
    (a,) = raters(1)
    assignment = assignment_claim(queue=queue, rater=a)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            queue=queue, item=assignment.item, rater=a, expires_at=timezone.now()
        )
