"""The smaller holes: draft leaks, 500s on odd input, unbounded imports and text, duplicate
submissions."""

import tracemalloc

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from metrics_registry.models import Release
from review.models import QueueStatus
from submissions.models import Submission
from tests.evaluations.factories import ScenarioFactory
from tests.metrics_registry.factories import MetricFactory, release_with
from tests.review.factories import metric_queue
from tests.submissions.test_submission_flow import FORM

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("fixture", "status"), [
    ("expert_reviewer", 404), ("researcher", 404), ("maintainer", 200),
])  # fmt: skip
def test_demographics_of_a_draft_release_only_for_maintainers(request, client_for, fixture, status):
    scenario = ScenarioFactory()
    draft = release_with("3.0.0", [scenario.metric_version.metric])
    response = client_for(request.getfixturevalue(fixture)).get(
        reverse("evaluations:release-demographics", args=[draft.pk])
    )
    assert response.status_code == status


@pytest.mark.parametrize("data", [{}, {"status": "exploded"}, {"status": "\u00e9"}])
def test_a_missing_or_unknown_queue_status_is_explained_not_a_500(client_for, researcher, data):
    MetricFactory(name="Offers a next step", status="validated")
    queue = metric_queue(n=1, required=1, created_by=researcher)
    client = client_for(researcher)
    response = client.post(reverse("review:queue-status", args=[queue.pk]), data)
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Unknown queue status" in page
    queue.refresh_from_db()
    assert queue.status == QueueStatus.OPEN


def test_a_huge_release_version_is_refused_with_a_reason(client_for, maintainer):
    response = client_for(maintainer).post(
        reverse("metrics_registry:release_create"),
        {"version": "99999999999999999999.0.0", "title": "Huge"},
    )
    assert response.status_code == 200
    assert "not a semantic version" in response.content.decode()
    assert not Release.objects.exists()


def test_the_import_command_stops_reading_at_its_limit(tmp_path):
    path = tmp_path / "huge.csv"
    row = "name,Uses pet names or terms of endearment.,negative,social-relationships,x\n"
    with path.open("w") as handle:
        handle.write("name,criterion,polarity,subareas,label_category\n")
        handle.write(row * 400_000)  # about 30 MB
    tracemalloc.start()
    with pytest.raises(CommandError, match="larger than 20 MB"):
        call_command("import_metrics", str(path), "--benchmark", "huge", "--dry-run")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 60 * 1024 * 1024  # bounded by the limit, not by the file


def test_the_rubric_import_command_stops_at_its_line_limit(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_text("{}\n" * 10_050)
    with pytest.raises(CommandError, match="more than 10000 lines"):
        call_command("import_rubric_items", str(path), "--dry-run")


def test_free_text_is_capped_with_a_counter_and_the_text_kept(client_for, contributor, settings):
    settings.TEXT_FIELD_MAX_LENGTH = 500
    client = client_for(contributor)
    form = client.get(reverse("submissions:create")).content.decode()
    assert 'maxlength="500"' in form
    assert "js/char-counter.js" in form
    response = client.post(
        reverse("submissions:create"), {**FORM, "behavior": "x" * 501, "save": "1"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "at most 500 characters" in page
    assert "x" * 501 in page
    assert not Submission.objects.exists()


def test_imports_refuse_over_long_text(researcher, settings):
    from metrics_registry.services import metrics_import_file

    settings.TEXT_FIELD_MAX_LENGTH = 100
    csv_text = (
        "name,criterion,polarity,subareas,label_category\n"
        f"Long,{'y' * 101},negative,social-relationships,emotional-dependence\n"
    )
    report = metrics_import_file(
        data=csv_text.encode(), filename="x.csv", benchmark_slug="b", created_by=researcher
    )
    assert "criterion is 101 characters long; at most 100" in report.errors[0].reason


def test_two_posts_of_the_same_submission_form_create_one_submission(client_for, contributor):
    client = client_for(contributor)
    page = client.get(reverse("submissions:create")).content.decode()
    token = page.split('name="form_token" value="', 1)[1].split('"', 1)[0]
    assert len(token) >= 24
    data = {**FORM, "form_token": token, "submit": "1"}
    first = client.post(reverse("submissions:create"), data)
    second = client.post(reverse("submissions:create"), data)
    assert Submission.objects.filter(contributor=contributor).count() == 1
    assert first["Location"] == second["Location"]
    # A fresh form is a new submission.
    other = client.get(reverse("submissions:create")).content.decode()
    assert token not in other
