"""Researcher review of drafted metric candidates: edit, rate, accept, reject, return."""

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from metrics_registry.models import Subarea
from metrics_registry.services import metric_create

from ..models import (
    CandidateChange,
    CandidateStatus,
    Fidelity,
    MetricCandidate,
    Submission,
    SubmissionStatus,
)
from .status import submission_status_set

CANDIDATE_FIELDS = ("short_name", "criterion", "polarity", "label_category", "rationale")


def _candidate_locked(candidate: MetricCandidate) -> MetricCandidate:
    candidate = (
        MetricCandidate.objects.select_for_update()
        .select_related("submission")
        .get(pk=candidate.pk)
    )
    if candidate.status != CandidateStatus.PENDING:
        raise ApplicationError(
            _("This candidate was already %(status)s.")
            % {"status": candidate.get_status_display().lower()}
        )
    return candidate


def _display(value) -> str:
    if hasattr(value, "all"):
        return ", ".join(sorted(str(v) for v in value.all()))
    if isinstance(value, list | tuple | set):
        return ", ".join(sorted(str(v) for v in value))
    return "" if value is None else str(value)


@transaction.atomic
def candidate_update(
    *, candidate: MetricCandidate, actor, subareas: Iterable[Subarea] | None = None, **fields
) -> MetricCandidate:
    """Edit a pending candidate; each changed field is recorded with its old and new value."""
    candidate = _candidate_locked(candidate)
    changes: dict[str, list[str]] = {}
    for name, value in fields.items():
        if name not in CANDIDATE_FIELDS:
            raise ApplicationError(_("Unknown candidate field: %(name)s") % {"name": name})
        if isinstance(value, str):
            value = value.strip()
        old = getattr(candidate, name)
        if old != value:
            changes[name] = [_display(old), _display(value)]
            setattr(candidate, name, value)
    if candidate.label_category.polarity != candidate.polarity:
        raise ApplicationError(
            _(
                "The label category “%(category)s” is for "
                "%(polarity)s metrics; pick one that matches the "
                "polarity."
            )
            % {
                "category": candidate.label_category,
                "polarity": candidate.label_category.polarity,
            }
        )
    if subareas is not None:
        subareas = list(subareas)
        if not subareas:
            raise ApplicationError(_("A metric needs at least one subarea."))
        old = set(candidate.subareas.all())
        if old != set(subareas):
            changes["subareas"] = [_display(old), _display(subareas)]
            candidate.subareas.set(subareas)
    if changes:
        candidate.save()
        CandidateChange.objects.create(
            candidate=candidate, action="edited", changes=changes, actor=actor
        )
    return candidate


@transaction.atomic
def candidate_rate_fidelity(*, candidate: MetricCandidate, actor, fidelity: str) -> MetricCandidate:
    if fidelity not in Fidelity.values:
        raise ApplicationError(_("Fidelity must be faithful, partly or unfaithful."))
    candidate = MetricCandidate.objects.select_for_update().get(pk=candidate.pk)
    if candidate.fidelity != fidelity:
        CandidateChange.objects.create(
            candidate=candidate,
            action="rated",
            actor=actor,
            changes={"fidelity": [candidate.fidelity, fidelity]},
        )
        candidate.fidelity = fidelity
        candidate.save(update_fields=["fidelity", "updated_at"])
    return candidate


def _decide(candidate: MetricCandidate, *, status: str, actor, reason: str) -> None:
    candidate.status = status
    candidate.review_reason = reason
    candidate.reviewed_by = actor
    candidate.reviewed_at = timezone.now()
    candidate.save()
    CandidateChange.objects.create(
        candidate=candidate,
        action=status,
        actor=actor,
        note=reason,
        changes={"status": [CandidateStatus.PENDING, status]},
    )


def _submission_settle(submission: Submission, *, actor) -> None:
    """Once no candidate is pending, the submission's outcome follows from the decisions."""
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status != SubmissionStatus.IN_REVIEW:
        return
    statuses = set(submission.candidates.values_list("status", flat=True))
    if CandidateStatus.PENDING in statuses:
        return
    if CandidateStatus.ACCEPTED in statuses:
        accepted = submission.candidates.filter(status=CandidateStatus.ACCEPTED)
        keys = [c.metric.key for c in accepted.select_related("metric")]
        submission_status_set(
            submission=submission,
            to_status=SubmissionStatus.ACCEPTED,
            actor=actor,
            note=f"Accepted as {'metric' if len(keys) == 1 else 'metrics'} {', '.join(keys)}.",
        )
    else:
        submission_status_set(
            submission=submission,
            to_status=SubmissionStatus.DECLINED,
            actor=actor,
            note="None of the drafted metrics could be accepted.",
        )


@transaction.atomic
def candidate_accept(
    *,
    candidate: MetricCandidate,
    actor,
    fidelity: str = "",
    note: str = "",
    validate: bool = False,
) -> MetricCandidate:
    """Accept a candidate: it becomes a registry metric crediting the contributor.

    A candidate rated faithful to its source, or one the accepting researcher validates in the
    same step (`validate`, for those who may change a metric's status), enters the registry as
    validated; otherwise it waits in "under review" for further checks.
    """
    if fidelity:
        candidate_rate_fidelity(candidate=candidate, actor=actor, fidelity=fidelity)
    candidate = _candidate_locked(candidate)
    if candidate.fidelity == Fidelity.UNFAITHFUL:
        raise ApplicationError(
            _(
                "A candidate rated unfaithful to its source cannot be accepted; edit it first and "
                "rate it again, or reject it."
            )
        )
    submission = candidate.submission
    metric = metric_create(
        name=candidate.short_name,
        criterion=candidate.criterion,
        polarity=candidate.polarity,
        subarea_slugs=[s.slug for s in candidate.subareas.all()],
        label_category_slug=candidate.label_category.slug,
        rubric_notes=candidate.rationale,
        age_contexts=submission.age_context,
        source_kind="expert_submission",
        contributor=submission.contributor,
        credit_name=submission.credit_name,
        source_reference=f"Submission #{submission.pk}: {submission.title}",
        created_by=actor,
        status="validated"
        if validate or candidate.fidelity == Fidelity.FAITHFUL
        else "under_review",
        change_note=note or "Accepted from an expert submission.",
    )
    candidate.metric = metric
    _decide(candidate, status=CandidateStatus.ACCEPTED, actor=actor, reason=note)
    _submission_settle(submission, actor=actor)
    return candidate


@transaction.atomic
def candidate_reject(*, candidate: MetricCandidate, actor, reason: str) -> MetricCandidate:
    if not (reason or "").strip():
        raise ApplicationError(_("Please give a reason for rejecting this candidate."))
    candidate = _candidate_locked(candidate)
    _decide(candidate, status=CandidateStatus.REJECTED, actor=actor, reason=reason.strip())
    _submission_settle(candidate.submission, actor=actor)
    return candidate


@transaction.atomic
def candidate_return(*, candidate: MetricCandidate, actor, request: str) -> MetricCandidate:
    """Send the submission back to its contributor with a request for changes."""
    if not (request or "").strip():
        raise ApplicationError(_("Tell the contributor what to change."))
    candidate = _candidate_locked(candidate)
    _decide(candidate, status=CandidateStatus.RETURNED, actor=actor, reason=request.strip())
    submission = Submission.objects.select_for_update().get(pk=candidate.submission_id)
    # Other pending drafts are superseded: the contributor's revision will be drafted anew.
    for other in submission.candidates.filter(status=CandidateStatus.PENDING):
        _decide(other, status=CandidateStatus.RETURNED, actor=actor, reason="Superseded.")
    submission.review_note = request.strip()
    submission.save(update_fields=["review_note", "updated_at"])
    submission_status_set(
        submission=submission,
        to_status=SubmissionStatus.CHANGES_REQUESTED,
        actor=actor,
        note=request.strip(),
    )
    return candidate
