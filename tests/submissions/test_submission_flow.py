import pytest
from django.core import mail
from django.urls import reverse

from core.exceptions import ApplicationError
from metrics_registry.models import Subarea
from submissions import services
from submissions.citations import citations_parse
from submissions.models import CitationKind, Submission, SubmissionStatus
from tests.submissions.factories import SubmissionFactory

pytestmark = pytest.mark.django_db

FORM = {
    "title": "Asking before answering",
    "behavior": "The assistant asks for the student's own ideas before writing anything.",
    "context": "Homework help for teenagers.",
    "supportive_examples": "What have you got so far?",
    "harmful_examples": "Here is your finished essay.",
    "justification": "Offloading the thinking reduces learning.",
    "citations_text": "doi:10.1000/xyz123\nhttps://example.org/study\nSmith (2024). A study.",
    "age_context": "teen",
    "expertise": "Teacher",
    "credit_name": "A. Teacher",
}


def test_citations_are_typed_line_by_line():
    parsed = citations_parse(
        "https://doi.org/10.1145/3544548.3581197\n\n- https://example.org/a?b=1\nSmith 2021, p. 4"
    )
    assert [(c.kind, c.value) for c in parsed] == [
        (CitationKind.DOI, "10.1145/3544548.3581197"),
        (CitationKind.URL, "https://example.org/a?b=1"),
        (CitationKind.TEXT, "Smith 2021, p. 4"),
    ]


def test_contributor_saves_a_draft_with_citations_and_subareas(client_for, contributor):
    subarea = Subarea.objects.get(slug="learning-skill-development")
    response = client_for(contributor).post(
        reverse("submissions:create"), {**FORM, "suggested_subareas": [subarea.pk], "save": "1"}
    )
    submission = Submission.objects.get(contributor=contributor)
    assert response["Location"] == reverse("submissions:detail", kwargs={"pk": submission.pk})
    assert submission.status == SubmissionStatus.DRAFT
    assert [c.kind for c in submission.citations.all()] == ["doi", "url", "text"]
    assert list(submission.suggested_subareas.all()) == [subarea]
    assert mail.outbox == []


def test_a_bad_citation_line_keeps_everything_the_user_typed(client_for, contributor):
    data = {**FORM, "citations_text": "https://not a url\nSmith 2020", "save": "1"}
    response = client_for(contributor).post(reverse("submissions:create"), data)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Line 1 looks like a web address" in page
    assert "The assistant asks for the student&#x27;s own ideas" in page
    assert "Smith 2020" in page
    assert not Submission.objects.exists()


def test_submit_reports_every_missing_field_inline_at_once(client_for, contributor):
    data = {
        **FORM,
        "context": "",
        "justification": " ",
        "supportive_examples": "",
        "harmful_examples": "",
        "submit": "1",
    }
    response = client_for(contributor).post(reverse("submissions:create"), data)
    assert response.status_code == 200
    form = response.context["form"]
    assert set(form.errors) == {"context", "justification", "supportive_examples"}
    assert all(len(errors) == 1 for errors in form.errors.values())
    page = response.content.decode()
    for message in ("Say when this comes up", "Say why it matters", "at least one example"):
        assert page.count(message) == 1
    # Each message sits under its own highlighted field, and the text typed stays.
    assert 'id="id_context"' in page.split("Say when this comes up")[0]
    assert page.count("is-invalid") >= 3
    assert "The assistant asks for the student&#x27;s own ideas" in page
    assert not Submission.objects.exists()


def test_fields_needed_to_submit_are_marked_up_front(client_for, contributor):
    page = client_for(contributor).get(reverse("submissions:create")).content.decode()
    assert "Fields marked * are needed to submit" in page
    for name in ("context", "justification", "supportive_examples", "harmful_examples"):
        assert f'id="div_id_{name}"' in page
        wrapper_tag = page.split(f'id="div_id_{name}"')[1].split(">")[0]
        assert "needed-to-submit" in wrapper_tag
        label = page.split(f'for="id_{name}"')[1].split("</label>")[0]
        assert '<span class="asteriskField">*</span>' in label
    assert "(one of the two)" in page.split('for="id_harmful_examples"')[1].split("</label>")[0]
    # The one-of-two rule stands beside the example fields, not only in their help.
    examples = page.split("<legend")[2].split("</fieldset>")[0]
    assert 'data-testid="examples-rule"' in examples
    assert "at least one of the two examples" in examples


def test_a_draft_can_still_be_saved_without_them(client_for, contributor):
    data = {**FORM, "context": "", "justification": "", "save": "1"}
    assert client_for(contributor).post(reverse("submissions:create"), data).status_code == 302


def test_submitting_an_incomplete_draft_explains_what_is_missing(contributor):
    submission = services.submission_create(contributor=contributor, title="Only a title")
    with pytest.raises(ApplicationError, match="Describe the behaviour of interest"):
        services.submission_submit(submission=submission, actor=contributor)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.DRAFT


def test_submit_moves_status_records_history_and_emails(django_capture_on_commit_callbacks):
    submission = SubmissionFactory()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.submission_submit(submission=submission, actor=submission.contributor)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.SUBMITTED
    assert submission.submitted_at is not None
    assert [e.to_status for e in submission.events.all()] == ["submitted"]
    assert len(callbacks) == 2  # the email and the drafting task, both after commit
    callbacks[0]()
    assert len(mail.outbox) == 1
    assert "we have received your submission" in mail.outbox[0].body
    assert f"/submissions/{submission.pk}/" in mail.outbox[0].body
    assert mail.outbox[0].to == [submission.contributor.email]


def test_submitted_text_cannot_be_edited_but_can_be_withdrawn(client_for):
    submission = SubmissionFactory(status=SubmissionStatus.IN_REVIEW)
    client = client_for(submission.contributor)
    response = client.post(reverse("submissions:edit", kwargs={"pk": submission.pk}), FORM)
    assert response.status_code == 302
    submission.refresh_from_db()
    assert submission.title == "Encouraging students to try first"
    with pytest.raises(ApplicationError, match="can no longer be edited"):
        services.submission_update(submission=submission, actor=submission.contributor, title="x")

    client.post(reverse("submissions:action", args=[submission.pk, "withdraw"]), {"reason": "Dup"})
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.WITHDRAWN
    assert submission.events.last().note == "Dup"
    with pytest.raises(ApplicationError, match="already withdrawn"):
        services.submission_withdraw(submission=submission, actor=submission.contributor)


def test_status_page_sanitizes_submitted_text(client_for):
    submission = SubmissionFactory(
        behavior='<script>alert("x")</script><b>Bold</b> <img src=x onerror="steal()">ok'
    )
    page = (
        client_for(submission.contributor)
        .get(reverse("submissions:detail", kwargs={"pk": submission.pk}))
        .content.decode()
    )
    assert "<script>alert" not in page
    assert "onerror" not in page
    assert "<b>Bold</b>" in page


@pytest.mark.parametrize(
    ("viewer", "status"),
    [
        ("owner", 200),
        ("other_contributor", 404),
        ("researcher", 200),
        ("maintainer", 200),
        ("expert_reviewer", 403),
        ("anonymous", 302),
    ],
)
def test_who_can_see_a_submission(request, client, client_for, viewer, status):
    submission = SubmissionFactory()
    if viewer == "owner":
        client = client_for(submission.contributor)
    elif viewer == "other_contributor":
        client = client_for(request.getfixturevalue("contributor"))
    elif viewer != "anonymous":
        user = request.getfixturevalue(viewer)
        if viewer == "expert_reviewer":
            user.groups.filter(name="Contributor").delete()
        client = client_for(user)
    response = client.get(reverse("submissions:detail", kwargs={"pk": submission.pk}))
    assert response.status_code == status


def test_only_the_owner_can_act_on_a_submission(client_for, researcher):
    submission = SubmissionFactory()
    response = client_for(researcher).post(
        reverse("submissions:action", args=[submission.pk, "withdraw"])
    )
    assert response.status_code == 404
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.DRAFT


def test_list_shows_only_my_submissions(client_for, contributor):
    mine = SubmissionFactory(contributor=contributor, title="Mine")
    SubmissionFactory(title="Someone else's")
    page = client_for(contributor).get(reverse("submissions:list")).content.decode()
    assert mine.title in page
    assert "Someone else" not in page


def test_the_history_records_no_save_that_was_not_pressed(client_for, contributor):
    client = client_for(contributor)
    # An empty Submit is refused and saves nothing.
    empty = client.post(reverse("submissions:create"), {"title": "", "submit": "1"})
    assert empty.status_code == 200
    assert not Submission.objects.exists()
    # Submit, corrected: the history says it was submitted, not saved as a draft.
    response = client.post(reverse("submissions:create"), {**FORM, "submit": "1"})
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert [e.to_status for e in submission.events.order_by("pk")] == [SubmissionStatus.SUBMITTED]
    page = client.get(response["Location"]).content.decode()
    assert "Saved as a draft" not in page
    # Save draft still says so.
    client.post(reverse("submissions:create"), {**FORM, "save": "1"})
    saved = Submission.objects.exclude(pk=submission.pk).get()
    assert [e.note for e in saved.events.all()] == ["Saved as a draft."]
