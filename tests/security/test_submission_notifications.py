"""A hostile title can neither break the notification email nor strand its submission."""

import pytest
from django.conf import settings
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from core.exceptions import ApplicationError
from core.mail import email_subject
from impactbench_site.celery import app as celery_app
from llm.models import ModelRole
from submissions import services
from submissions.drafting import submissions_requeue_stuck
from submissions.models import Submission, SubmissionStatus
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.submissions.factories import SubmissionFactory
from tests.submissions.test_submission_flow import FORM

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager_tasks():
    """Tasks run inline through Celery's own call path, so `.delay` does the real work."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def offline_drafter():
    configuration = OfflineConfigurationFactory(name="Offline drafter")
    ModelRoleAssignmentFactory(role=ModelRole.METRIC_DRAFTER, configuration=configuration)
    return configuration


@pytest.mark.parametrize("title", ["Line one\nLine two", "Carriage\rreturn", "Sep\u2028line"])
def test_the_submission_form_refuses_multi_line_titles_and_keeps_the_text(
    client_for, contributor, title
):
    response = client_for(contributor).post(
        reverse("submissions:create"), {**FORM, "title": title, "submit": "1"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "single line" in page
    assert "Offloading the thinking reduces learning." in page
    assert not Submission.objects.exists()


def test_the_service_refuses_multi_line_titles(contributor):
    with pytest.raises(ApplicationError, match="single line"):
        services.submission_create(contributor=contributor, title="a\nb")


def test_email_subjects_are_one_line():
    assert email_subject("[ImpactBench] Now submitted:", "Evil\r\nBcc: x@evil.example") == (
        "[ImpactBench] Now submitted: Evil Bcc: x@evil.example"
    )


def test_a_title_with_a_line_break_still_submits_and_drafts(
    django_capture_on_commit_callbacks, eager_tasks, offline_drafter
):
    # Rows written before titles were validated may still hold a line break.
    submission = SubmissionFactory(title="Evil\r\nBcc: attacker@evil.example")
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_submit(submission=submission, actor=submission.contributor)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.IN_REVIEW  # drafting ran after the email
    assert mail.outbox
    for message in mail.outbox:
        assert "\n" not in message.subject
        assert "\r" not in message.subject
        assert message.to == [submission.contributor.email]


def test_a_failing_mail_server_never_fails_the_users_action(
    settings, django_capture_on_commit_callbacks, eager_tasks, offline_drafter
):
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens there
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    submission = SubmissionFactory()
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_submit(submission=submission, actor=submission.contributor)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.IN_REVIEW


def test_a_submission_stuck_in_submitted_is_requeued(eager_tasks, offline_drafter):
    stuck = SubmissionFactory(status=SubmissionStatus.SUBMITTED)
    fresh = SubmissionFactory(status=SubmissionStatus.SUBMITTED)
    old = timezone.now() - timezone.timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS + 5)
    Submission.objects.filter(pk=stuck.pk).update(updated_at=old)
    draft = SubmissionFactory(status=SubmissionStatus.DRAFT)
    Submission.objects.filter(pk=draft.pk).update(updated_at=old)

    from submissions.tasks import requeue_stuck_submissions

    assert requeue_stuck_submissions.delay().get() == [stuck.pk]
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert stuck.status == SubmissionStatus.IN_REVIEW
    assert fresh.status == SubmissionStatus.SUBMITTED
    assert submissions_requeue_stuck() == []  # nothing left to re-queue


def test_the_requeue_runs_on_a_beat_schedule():
    # What a worker does when it starts: import every app's tasks module (autodiscovery). The
    # test process imports them only as tests happen to, so without this the answer would
    # depend on which tests ran first in this process.
    celery_app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["submissions-requeue-stuck"]
    assert entry["schedule"] > 0
    # Every scheduled task, not only this one, names a task a worker knows.
    for name, scheduled in settings.CELERY_BEAT_SCHEDULE.items():
        assert scheduled["task"] in celery_app.tasks, name
