import pytest
from django.core import mail
from django.urls import reverse

from core.exceptions import ApplicationError
from metrics_registry.models import LabelCategory, Metric, Subarea
from metrics_registry.services import metric_create
from submissions import services
from submissions.drafting import submission_draft_candidates
from submissions.models import CandidateStatus, SubmissionStatus
from tests.submissions.factories import SubmissionFactory
from tests.submissions.test_drafting import offline_drafter  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def in_review(offline_drafter, django_capture_on_commit_callbacks):  # noqa: F811
    submission = SubmissionFactory(credit_name="Dr. A. Teacher")
    with django_capture_on_commit_callbacks(execute=False):
        services.submission_submit(submission=submission, actor=submission.contributor)
        submission_draft_candidates(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.IN_REVIEW
    return submission


def review_url(candidate):
    return reverse("submissions:candidate-review", kwargs={"pk": candidate.pk})


def form_data(candidate, **overrides):
    data = {
        "short_name": candidate.short_name,
        "criterion": candidate.criterion,
        "polarity": candidate.polarity,
        "subareas": [s.pk for s in candidate.subareas.all()],
        "label_category": candidate.label_category_id,
        "rationale": candidate.rationale,
        "fidelity": "",
        "reason": "",
    }
    data.update(overrides)
    return data


def test_researcher_edits_rates_and_accepts_a_candidate(client_for, researcher, in_review):
    candidate = in_review.candidates.order_by("position").first()
    others = list(in_review.candidates.exclude(pk=candidate.pk))
    client = client_for(researcher)
    new_criterion = "The assistant asks for the student's own ideas before offering any text."
    response = client.post(
        review_url(candidate),
        form_data(candidate, criterion=new_criterion, fidelity="faithful", action="accept"),
    )
    assert response.status_code == 302
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.ACCEPTED
    assert candidate.reviewed_by == researcher
    metric = candidate.metric
    version = metric.current_version
    assert version.criterion == new_criterion
    assert metric.contributor == in_review.contributor
    assert metric.credit_name == "Dr. A. Teacher"
    assert metric.source_kind == "expert_submission"
    assert metric.validation_status == "validated"  # rated faithful
    actions = [c.action for c in candidate.changes.all()]
    assert actions == ["drafted", "edited", "rated", "accepted"]
    edit = candidate.changes.get(action="edited")
    assert edit.actor == researcher
    assert edit.changes["criterion"][1] == new_criterion

    for other in others:
        services.candidate_reject(candidate=other, actor=researcher, reason="Overlaps the first.")
    in_review.refresh_from_db()
    assert in_review.status == SubmissionStatus.ACCEPTED
    page = (
        client_for(in_review.contributor)
        .get(reverse("submissions:detail", kwargs={"pk": in_review.pk}))
        .content.decode()
    )
    assert metric.key in page
    assert reverse("metrics_registry:metric_detail", kwargs={"key": metric.key}) in page


def test_reject_needs_a_reason_and_all_rejected_declines(researcher, in_review):
    with pytest.raises(ApplicationError, match="reason"):
        services.candidate_reject(
            candidate=in_review.candidates.first(), actor=researcher, reason=""
        )
    for candidate in in_review.candidates.all():
        services.candidate_reject(candidate=candidate, actor=researcher, reason="Not observable.")
    in_review.refresh_from_db()
    assert in_review.status == SubmissionStatus.DECLINED
    assert not Metric.objects.filter(contributor=in_review.contributor).exists()


def test_send_back_requests_changes_and_resubmission_drafts_again(
    researcher, in_review, django_capture_on_commit_callbacks
):
    candidate = in_review.candidates.first()
    with django_capture_on_commit_callbacks(execute=True):
        services.candidate_return(
            candidate=candidate, actor=researcher, request="Please add a concrete example."
        )
    in_review.refresh_from_db()
    assert in_review.status == SubmissionStatus.CHANGES_REQUESTED
    assert in_review.review_note == "Please add a concrete example."
    assert not in_review.candidates.filter(status=CandidateStatus.PENDING).exists()
    assert "Please add a concrete example." in mail.outbox[-1].body

    services.submission_update(
        submission=in_review, actor=in_review.contributor, harmful_examples="Here is your essay."
    )
    with django_capture_on_commit_callbacks(execute=False):
        services.submission_submit(submission=in_review, actor=in_review.contributor)
    submission_draft_candidates(submission_id=in_review.pk)
    in_review.refresh_from_db()
    assert in_review.status == SubmissionStatus.IN_REVIEW
    assert in_review.candidates.filter(status=CandidateStatus.PENDING).exists()
    assert in_review.candidates.filter(status=CandidateStatus.RETURNED).exists()


def test_label_category_must_match_polarity_and_the_form_keeps_input(
    client_for, researcher, in_review
):
    candidate = in_review.candidates.filter(polarity="positive").first()
    negative = LabelCategory.objects.filter(polarity="negative").first()
    response = client_for(researcher).post(
        review_url(candidate),
        form_data(candidate, label_category=negative.pk, short_name="Edited name", action="save"),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "pick one that matches the polarity" in page
    assert 'value="Edited name"' in page
    candidate.refresh_from_db()
    assert candidate.short_name != "Edited name"


def test_unfaithful_candidates_cannot_be_accepted(researcher, in_review):
    candidate = in_review.candidates.first()
    with pytest.raises(ApplicationError, match="unfaithful"):
        services.candidate_accept(candidate=candidate, actor=researcher, fidelity="unfaithful")
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.PENDING
    assert candidate.fidelity == ""  # the refused decision left nothing half-done
    assert not Metric.objects.exists()


def test_similar_metrics_are_shown_with_a_score(client_for, researcher, in_review):
    metric_create(
        name="Asks for the student's own ideas first",
        criterion="The assistant asks students for their own ideas and outline before writing.",
        polarity="positive",
        subarea_slugs=["learning-skill-development"],
        label_category_slug="learning",
        source_kind="expert_submission",
        created_by=researcher,
    )
    metric_create(
        name="Uses pet names",
        criterion="The assistant calls the user darling or sweetheart.",
        polarity="negative",
        subarea_slugs=["social-relationships"],
        label_category_slug="emotional-dependence",
        source_kind="expert_submission",
        created_by=researcher,
    )
    candidate = in_review.candidates.first()
    page = client_for(researcher).get(review_url(candidate)).content.decode()
    section = page.split('data-testid="similar-metrics"')[1].split("</ul>")[0]
    assert "Asks for the student&#x27;s own ideas first" in section
    assert "Uses pet names" not in section
    contributor_page = (
        client_for(in_review.contributor)
        .get(reverse("submissions:detail", kwargs={"pk": in_review.pk}))
        .content.decode()
    )
    assert "Existing metrics that look similar" in contributor_page


@pytest.mark.parametrize(
    ("role", "status"),
    [
        ("anonymous", 302),
        ("contributor", 403),
        ("expert_reviewer", 403),
        ("researcher", 200),
        ("maintainer", 200),
    ],
)
def test_candidate_pages_are_for_researchers_and_maintainers(
    request, client, client_for, in_review, role, status
):
    if role != "anonymous":
        client = client_for(request.getfixturevalue(role))
    candidate = in_review.candidates.first()
    assert client.get(reverse("submissions:candidate-list")).status_code == status
    assert client.get(review_url(candidate)).status_code == status
    client.post(review_url(candidate), form_data(candidate, action="reject", reason="x"))
    candidate.refresh_from_db()
    assert (candidate.status == CandidateStatus.REJECTED) is (status == 200)


def test_subarea_list_is_complete_in_the_form(client_for, researcher, in_review):
    page = client_for(researcher).get(review_url(in_review.candidates.first())).content.decode()
    assert page.count('name="subareas"') == Subarea.objects.count()


def test_the_decision_email_gives_every_drafted_metrics_outcome(
    researcher, in_review, django_capture_on_commit_callbacks, settings
):
    settings.SITE_URL = "http://demo.example:8555/"
    first, *others = list(in_review.candidates.order_by("position"))
    assert others, "the offline drafter proposes more than one metric"
    with django_capture_on_commit_callbacks(execute=True):
        services.candidate_accept(candidate=first, actor=researcher, fidelity="faithful")
        for other in others:
            services.candidate_reject(candidate=other, actor=researcher, reason="Covered already.")
    first.refresh_from_db()
    assert len(mail.outbox) == 1
    subject = f"[ImpactBench] Your submission was accepted: {in_review.title}"
    assert mail.outbox[0].subject == subject
    body = mail.outbox[0].body
    assert f"{first.short_name}: accepted as {first.metric.key}" in body
    assert f"http://demo.example:8555/registry/metrics/{first.metric.key}/" in body
    for other in others:
        assert f"{other.short_name}: not accepted. Covered already." in body
    assert "candidate" not in body
    assert "(s)" not in body


def test_after_accept_the_researcher_is_told_which_metric_was_created(
    client_for, researcher, in_review
):
    candidate = in_review.candidates.order_by("position").first()
    client = client_for(researcher)
    response = client.post(
        review_url(candidate),
        form_data(candidate, fidelity="faithful", action="accept"),
        follow=True,
    )
    candidate.refresh_from_db()
    metric = candidate.metric
    page = response.content.decode()
    link = reverse("metrics_registry:metric_detail", kwargs={"key": metric.key})
    assert f'<a href="{link}" data-testid="created-metric">{metric.key}</a>' in page
    assert "the candidate is now" not in page


def test_the_accepting_researcher_validates_the_metric_in_the_same_step(
    client_for, researcher, in_review
):
    first, second = in_review.candidates.order_by("position")[:2]
    client = client_for(researcher)
    assert 'name="validate"' in client.get(review_url(first)).content.decode()
    # Partly faithful and not validated: the metric waits under review, and the page says why
    # a release will not take it.
    response = client.post(
        review_url(first), form_data(first, fidelity="partly", action="accept"), follow=True
    )
    first.refresh_from_db()
    assert first.metric.validation_status == "under_review"
    assert "validate it on its page before" in response.content.decode()
    response = client.post(
        review_url(second),
        form_data(second, fidelity="partly", action="accept", validate="on"),
        follow=True,
    )
    second.refresh_from_db()
    assert second.metric.validation_status == "validated"
    history = second.metric.status_changes.get()
    assert (history.to_status, history.changed_by) == ("validated", researcher)


def test_rejecting_without_a_reason_says_so_once(client_for, researcher, in_review):
    candidate = in_review.candidates.first()
    response = client_for(researcher).post(
        review_url(candidate), form_data(candidate, action="reject")
    )
    assert response.status_code == 400
    assert response.content.decode().count("Please give a reason for rejecting") == 1
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.PENDING
