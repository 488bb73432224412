"""A run whose worker could not write its call journal: exact call log, and said on its page."""

import os

import pytest
from django.urls import reverse

from evaluations.engine import journal
from evaluations.models import ConversationStatus, RunStatus
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall
from tests.evaluations.test_engine import _run, _shapes
from tests.evaluations.test_run_worker import _taxonomy  # noqa: F401 - a fixture (used by name)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _refusing_folder(tmp_path, how: str):
    """A journal folder no file can be created in: read-only, or a file where it should be."""
    if how == "file":
        blocker = tmp_path / "journal"
        blocker.write_text("not a folder")
        return blocker / "here"
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder all the same")
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    return folder


@pytest.mark.slow(reason="a whole run through the engine and the fake endpoint, then its page")
@pytest.mark.parametrize("how", ["file", "read-only"])
def test_a_journal_that_refuses_writes_is_shown_on_the_run_page_and_loses_no_row(
    how, fake_models, settings, tmp_path, client_for, researcher
):
    settings.ENGINE_JOURNAL_DIR = str(_refusing_folder(tmp_path, how))
    run = _run(fake_models, conversations=2, turns=1, judgments=1)

    assert runs.run_process_inline(run_id=run.pk) == 2

    assert _shapes(run) == {(ConversationStatus.COMPLETED, 1, 1)}
    http = LLMCall.objects.filter(run_id=run.pk).exclude(outcome=CallOutcome.CACHED)
    assert http.count() == fake_models.server.request_count
    assert not http.filter(outcome=CallOutcome.UNKNOWN).exists()
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.journal_failed_at is not None
    why = "Not a directory" if how == "file" else "Permission denied"
    assert run.journal_failure.endswith(why)

    page = client_for(researcher).get(reverse("evaluations:run-detail", args=[run.pk]))
    html = page.content.decode()
    assert 'data-testid="run-journal-failure"' in html
    assert "could not write its call journal" in html
    assert why in html


@pytest.mark.slow(reason="a whole run through the engine and the fake endpoint")
def test_a_run_whose_journal_works_shows_no_warning(fake_models, settings, tmp_path):
    settings.ENGINE_JOURNAL_DIR = str(tmp_path)
    run = _run(fake_models, conversations=2, turns=1, judgments=1)
    assert runs.run_process_inline(run_id=run.pk) == 2
    run.refresh_from_db()
    assert (run.journal_failed_at, run.journal_failure) == (None, "")
    assert not list(journal.journal_dir().iterdir())  # every file written and removed
