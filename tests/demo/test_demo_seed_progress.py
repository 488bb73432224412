"""The background demo seed: its progress file, the banner on every page and the JSON endpoint."""

import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from demo.progress import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    RUNNING,
    SeedProgress,
    SeedTracker,
    progress_read,
    progress_write,
)
from demo.seeding import demo_seed_steps
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from metrics_registry.models import Metric, Release

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture(autouse=True)
def progress_file(tmp_path, settings):
    settings.DEMO_SEED_PROGRESS_FILE = tmp_path / "demo-seed.json"
    return settings.DEMO_SEED_PROGRESS_FILE


@pytest.fixture
def small_catalogue(monkeypatch):
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", DEMO_METRICS[:3])


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])  # noqa: S603 - fixed argument list
    child.wait()
    return child.pid


def _running(**fields) -> SeedProgress:
    values = {"step": "run", "label": "run", "unit": "conversations", "done": 412}
    values |= {"total": 1152, "step_index": 7, "steps": 9, "pid": os.getpid()}
    values |= {"share_before": 0.14, "share": 0.8}  # of the whole seed's time
    return SeedProgress(**(values | fields))


def test_home_page_shows_the_banner_while_seeding_and_not_after(client):
    progress_write(_running())
    page = client.get(reverse("core:home")).content.decode()
    assert 'data-testid="demo-seed-banner"' in page
    assert "Seeding demo data: run 412 / 1,152 conversations (step 7 of 9)" in page
    assert "js/demo-seed.js" in page  # the script that keeps it current
    assert 'data-progress="42.6"' in page  # 14 % before this step, 412/1152 of its 80 %

    progress_write(_running(state=COMPLETE))
    page = client.get(reverse("core:home")).content.decode()
    assert "demo-seed-banner" not in page
    assert "demo-seed.js" not in page


def test_no_banner_where_no_seed_ran(client, progress_file):
    assert not progress_file.exists()
    page = client.get(reverse("core:home")).content.decode()
    assert "demo-seed-banner" not in page


def test_every_page_shows_the_banner_to_everyone(client, maintainer):
    progress_write(_running(label="scenarios", unit="metrics", done=5, total=64, step_index=5))
    for url in (reverse("metrics_registry:metric_list"), reverse("results:explore")):
        assert "Seeding demo data: scenarios 5 / 64 metrics" in client.get(url).content.decode()
    client.force_login(maintainer)
    page = client.get(reverse("core:dashboard")).content.decode()
    assert "Seeding demo data: scenarios 5 / 64 metrics" in page


def test_a_seed_whose_process_is_gone_reads_interrupted(client):
    progress_write(_running(pid=_dead_pid()))
    assert progress_read().state == INTERRUPTED
    page = client.get(reverse("core:home")).content.decode()
    assert "Seeding demo data was interrupted" in page
    assert "make demo" in page


def test_progress_endpoint_json(client, progress_file, django_assert_num_queries):
    url = reverse("demo:progress")
    assert client.get(url).json() == {"state": "none", "seeding": False}

    progress_write(_running())
    with django_assert_num_queries(0):  # a file read, never the database
        response = client.get(url)
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    data = response.json()
    assert data["state"] == RUNNING
    assert data["seeding"] is True
    assert (data["step"], data["done"], data["total"]) == ("run", 412, 1152)
    assert (data["step_index"], data["steps"]) == (7, 9)
    assert data["percent"] == pytest.approx(100 * (0.14 + 0.8 * 412 / 1152), abs=0.05)
    assert data["message"] == "Seeding demo data: run 412 / 1,152 conversations (step 7 of 9)"
    assert "reports" not in data

    progress_write(_running(state=COMPLETE))
    data = client.get(url).json()
    assert (data["state"], data["seeding"], data["percent"]) == (COMPLETE, False, 100.0)

    progress_file.write_text("{not json", encoding="utf-8")  # torn or foreign file
    assert client.get(url).json()["state"] == "none"


@pytest.mark.slow(reason="runs the whole demo seed")
def test_seed_demo_records_every_step_and_ends_complete(small_catalogue, progress_file):
    seen = []
    original = SeedTracker.step

    def spy(self, index, **kwargs):
        original(self, index, **kwargs)
        seen.append(json.loads(progress_file.read_text())["label"])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SeedTracker, "step", spy)
        call_command("seed_demo", "--record-progress", verbosity=0)
    steps = demo_seed_steps()
    assert seen == [step.label for step in steps]  # each written when it started
    progress = progress_read()
    assert progress.state == COMPLETE
    assert progress.percent == 100.0
    assert progress.share_before + progress.share == pytest.approx(1.0)  # the last step
    assert len(progress.reports) == len(steps)
    assert any("3 metrics created" in line for line in progress.reports)


def test_seed_demo_writes_no_progress_unless_asked(small_catalogue, progress_file):
    call_command("seed_demo", verbosity=0)
    assert not progress_file.exists()


@pytest.mark.slow(reason="runs the demo seed twice")
def test_a_seed_that_fails_is_recorded_and_resumes_on_the_next_run(
    small_catalogue, monkeypatch, client
):
    def broken(**freezes):
        raise RuntimeError("disk full")

    monkeypatch.setattr(registry_demo, "demo_release_seed", broken)
    with pytest.raises(CommandError, match="disk full"):
        call_command("seed_demo", "--record-progress", verbosity=0)
    progress = progress_read()
    assert progress.state == FAILED
    assert progress.error == "release: RuntimeError: disk full"
    assert Metric.objects.count() == 3  # the steps before it are kept
    page = client.get(reverse("core:home")).content.decode()
    assert "Seeding demo data stopped: release: RuntimeError: disk full" in page

    monkeypatch.undo()
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", DEMO_METRICS[:3])
    call_command("seed_demo", "--record-progress", verbosity=0)
    assert progress_read().state == COMPLETE
    assert Metric.objects.count() == 3  # nothing made twice
    assert Release.objects.filter(version=registry_demo.DEMO_RELEASE_VERSION).count() == 1
    assert "demo-seed-banner" not in client.get(reverse("core:home")).content.decode()


def test_tracker_throttles_counts_but_always_writes_steps(progress_file):
    tracker = SeedTracker(steps=2, record=True)
    tracker.step(1, key="run", label="run", unit="conversations")
    for done in range(1, 500):
        tracker.count(done, 1000)
    # Written at most every WRITE_INTERVAL_SECONDS: the file lags the counter within a step...
    assert progress_read().done < 499
    tracker.step(2, key="summaries", label="summaries", unit="runs")
    assert (progress_read().step, progress_read().done) == ("summaries", 0)  # ...not across


def test_each_app_registers_its_steps_in_the_seed_order(settings):
    settings.DEMO_SEED_EVALUATIONS = True
    assert [step.key for step in demo_seed_steps()] == [
        "configurations",
        "metrics",
        "rubric",
        "consensus",
        "release",
        "metric-texts",
        "scenarios",
        "spanish",
        "anchor_study",
        "earlier_run",
        "run",
        "blind-queues",
        "realism-panel",
        "summaries",
        "user-panel",
        "queues",
    ]
    settings.DEMO_SEED_EVALUATIONS = False
    assert [step.key for step in demo_seed_steps()] == [
        "configurations",
        "metrics",
        "rubric",
        "consensus",
        "release",
        "metric-texts",
        "blind-queues",
        "realism-panel",
        "user-panel",
        "queues",
    ]
