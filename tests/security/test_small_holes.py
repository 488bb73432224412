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


def test_a_conversation_of_a_run_outside_any_release_opens_for_staff(client_for, researcher):
    from evaluations.models import Conversation
    from tests.llm.factories import OfflineConfigurationFactory
    from tests.results.factories import completed_run, metric_version, scenario

    version = metric_version(polarity="positive")
    target = OfflineConfigurationFactory(name="Anchor study target")
    run = completed_run(
        targets=[target],
        versions=[version],
        outcomes=[(scenario(version, 0, "adult"), target, True)],
        publish_as=None,
    )
    assert run.release is None
    conversation = Conversation.objects.filter(run=run).first()
    response = client_for(researcher).get(reverse("results:conversation", args=[conversation.pk]))
    assert response.status_code == 200
    assert "outside any release" in response.content.decode()


def test_a_nul_in_a_rating_draft_is_a_clear_400(client_for, expert_reviewer):
    from review.services import assignment_claim
    from tests.review.factories import synthetic_candidates

    queue = metric_queue(n=1, required=1, candidates=synthetic_candidates(1))
    assignment = assignment_claim(queue=queue, rater=expert_reviewer)
    response = client_for(expert_reviewer).post(
        reverse("review:draft", args=[assignment.pk]),
        {"answer-fidelity": "faithful", "comment": "half\x00way"},
    )
    assert response.status_code == 400
    assert "control character" in response.json()["error"]


def test_a_nul_in_a_withdrawal_reason_is_a_clear_400(client_for, contributor):
    from tests.submissions.factories import SubmissionFactory

    submission = SubmissionFactory(contributor=contributor)
    response = client_for(contributor).post(
        reverse("submissions:action", args=[submission.pk, "withdraw"]), {"reason": "no\x00"}
    )
    assert response.status_code == 400
    assert "control character" in response.content.decode()
    submission.refresh_from_db()
    assert submission.status != "withdrawn"


def test_a_metric_import_with_a_100000_digit_weight_is_explained():
    from core.exceptions import ApplicationError
    from core.jsonsafe import json_loads_checked

    with pytest.raises(ApplicationError, match="100,000 digits"):
        json_loads_checked('{"source_weights": {"a": ' + "9" * 100_000 + "}}")
    with pytest.raises(ApplicationError, match="too large"):
        json_loads_checked('[{"weight": 1e999}]')
    assert json_loads_checked('{"weight": 12, "x": 0.5}') == {"weight": 12, "x": 0.5}


def test_an_oversized_body_is_refused_unread(client, settings):
    settings.REQUEST_BODY_MAX_BYTES = 1000
    for url in ("/accounts/login/", "/api/submissions/", "/admin/login/", "/contact/"):
        response = client.generic(
            "POST", url, b"x" * 2000, content_type="multipart/form-data; boundary=zz"
        )
        assert response.status_code == 413, url


class _Recorder:
    """An upload handler that notes every file part a parser hands to it."""

    seen: list = []

    def __init__(self, request=None):
        pass

    def handle_raw_input(self, *args, **kwargs):
        return None

    def new_file(self, field_name, file_name, *args, **kwargs):
        _Recorder.seen.append(file_name)

    def receive_data_chunk(self, raw_data, start):
        return None

    def file_complete(self, file_size):
        return None

    def upload_complete(self):
        return None

    def upload_interrupted(self):
        return None


def test_a_signed_out_upload_is_never_spooled(client, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.FILE_UPLOAD_HANDLERS = [f"{__name__}._Recorder"]
    _Recorder.seen = []
    upload = SimpleUploadedFile("big.bin", b"\x01" * 100_000)
    for url in ("/accounts/login/", "/api/submissions/", "/admin/login/"):
        client.post(url, {"login": "a@example.org", "password": "x", "file": upload})
        upload.seek(0)
    assert _Recorder.seen == []


def _display_spoofing_characters() -> list[str]:
    """Every code point of the refused set (bidi controls, invisible spaces and operators, the
    BOM, tag characters), read out of the whole code space; each is a format character or an
    unassigned one of the tag block."""
    import sys
    import unicodedata

    from core.validators import DISPLAY_SPOOFING

    refused = [chr(c) for c in range(sys.maxunicode + 1) if DISPLAY_SPOOFING.match(chr(c))]
    assert all(unicodedata.category(c) in ("Cf", "Cn") for c in refused)
    return refused


def test_one_line_fields_refuse_every_display_spoofing_character():
    from django.core.exceptions import ValidationError

    from core.validators import single_line

    refused = _display_spoofing_characters()
    assert {"\u202e", "\u2066", "\u2069", "\u061c", "\u200b", "\ufeff", "\U000e0041"} <= set(
        refused
    )
    assert len(refused) >= 128 + 20
    for char in refused:
        with pytest.raises(ValidationError, match="invisible"):
            single_line(f"Report{char}fdp.exe")
    single_line("می\u200cخواهم")  # Persian needs the zero-width non-joiner
    single_line("family \U0001f468\u200d\U0001f469\u200d\U0001f467")  # an emoji sequence


def test_a_submission_title_with_a_right_to_left_override_is_refused(client_for, contributor):
    response = client_for(contributor).post(
        reverse("submissions:create"), {**FORM, "title": "Invoice \u202egpj.exe", "save": "1"}
    )
    assert response.status_code == 200
    assert "invisible direction" in response.content.decode()
    assert not Submission.objects.exists()


def test_an_imported_metric_name_with_tag_characters_is_a_bad_row():
    from metrics_registry.services import metrics_import_file

    header = "name,criterion,polarity,subareas,label_category"
    data = f"{header}\nPet\U000e0041 names,Uses pet names.,negative,agency-purpose,agency\n"
    report = metrics_import_file(
        data=data, filename="x.csv", benchmark_slug="b", created_by=None, dry_run=True
    )
    assert len(report.errors) == 1
    assert "invisible" in report.errors[0].reason
