"""The researchers' import page and the command: the same service behind both; a bad file
re-renders the form with every bad line and the person's choices and text kept."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluations.models import Conversation, EvaluationRun, RunStatus, TranscriptImport
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db

GOOD = json.dumps(
    {
        "messages": [
            {"role": "user", "content": "I keep failing my driving test."},
            {"role": "assistant", "content": "That is frustrating; what went wrong last time?"},
        ],
        "metadata": {"model": "acme-chat"},
    }
)
BAD = json.dumps({"messages": [{"role": "robot", "content": "beep"}]})
URL = reverse("evaluations:transcript-import")


@pytest.fixture
def choices():
    version = current_version(MetricFactory())
    judge = OfflineConfigurationFactory()
    return {
        "run_name": "Driving-school bot",
        "format": "openai_jsonl",
        "metric_versions": [version.pk],
        "judge": judge.pk,
        "judgments_per_conversation": 1,
        "age_context": "teen",
        "language": "en",
        "model_name": "",
    }


def test_a_bad_file_rerenders_with_each_line_and_the_text_and_choices_kept(
    client_for, researcher, choices
):
    text = f"{GOOD}\n{BAD}\n"
    response = client_for(researcher).post(URL, {**choices, "text": text})
    assert response.status_code == 400
    body = response.content.decode()
    assert "line 2: message 1 has the unknown role “robot”" in body
    assert "nothing was saved" in body
    form = response.context["form"]
    assert form["text"].value() == text
    assert form["run_name"].value() == "Driving-school bot"
    assert form["age_context"].value() == "teen"
    assert [str(v) for v in form["metric_versions"].value()] == [str(choices["metric_versions"][0])]
    assert not EvaluationRun.objects.exists()


def test_an_uploaded_file_is_imported_and_queued_for_the_judges(
    client_for, researcher, choices, sent_tasks, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("chats.jsonl", f"{GOOD}\n{GOOD}\n".encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(researcher).post(URL, {**choices, "file": upload})
    run = EvaluationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("evaluations:run-detail", args=[run.pk])
    assert run.status == RunStatus.RUNNING
    source = TranscriptImport.objects.get(run=run)
    assert (source.file_name, source.imported_by) == ("chats.jsonl", researcher)
    assert Conversation.objects.filter(run=run, scenario__age_context="teen").count() == 2
    assert sent_tasks.args("evaluations.tasks.run_dispatch") == [(run.pk,)]
    page = client_for(researcher).get(response["Location"]).content.decode()
    assert "Imported transcripts, not a simulated benchmark." in page
    assert "no simulator: imported transcripts" in page


@pytest.mark.parametrize("role", ["contributor", "expert_reviewer"])
def test_only_researchers_and_maintainers_may_import(client_for, request, role, choices):
    user = request.getfixturevalue(role)
    response = client_for(user).post(URL, {**choices, "text": GOOD})
    assert response.status_code == 403
    assert not EvaluationRun.objects.exists()


def test_the_command_imports_and_judges_with_a_progress_bar(tmp_path, choices, capsys):
    path = tmp_path / "chats.jsonl"
    path.write_text(f"{GOOD}\n{GOOD}\n{GOOD}\n")
    judge = OfflineConfigurationFactory()
    version = current_version(MetricFactory())
    call_command(
        "import_transcripts",
        str(path),
        "--format=openai_jsonl",
        f"--metric={version.metric.key}",
        "--run-name=From the command line",
        f"--judge={judge.name}",
        "--judgments=1",
        "--inline",
    )
    out = capsys.readouterr().out
    run = EvaluationRun.objects.get(name="From the command line")
    assert run.status == RunStatus.COMPLETED
    assert run.conversations_completed == 3
    assert f"Run {run.pk}: 3 imported conversations to judge." in out
    assert "3/3" in out  # the bar


def test_the_command_names_the_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\n{{oops\n")
    with pytest.raises(CommandError, match="line 2: This is not valid JSON"):
        call_command(
            "import_transcripts",
            str(path),
            "--format=openai_jsonl",
            f"--metric={MetricFactory().key}",
            "--run-name=Bad",
            f"--judge={OfflineConfigurationFactory().name}",
        )
    assert not EvaluationRun.objects.exists()
