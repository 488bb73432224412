"""Runs on real Celery workers: completion, and killing a worker mid-run then resuming."""

import importlib
import time

import pytest
from django.db.models import Count

from evaluations.models import Conversation, ConversationStatus, Judgment, RunStatus, Turn
from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from tests.evaluations.conftest import FakeModels
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = [
    pytest.mark.worker,
    pytest.mark.slow(reason="runs evaluations through real Celery workers"),
]


@pytest.fixture(autouse=True)
def _taxonomy(transactional_db):
    """Transactional tests that ran before may have flushed the taxonomy the data migrations
    loaded; their loaders are idempotent, so load it again."""
    from django.apps import apps

    for module in ("0002_load_taxonomy", "0004_load_label_categories"):
        migration = importlib.import_module(f"metrics_registry.migrations.{module}")
        loader = getattr(migration, "load_taxonomy", None) or migration.load_label_categories
        loader(apps, None)


def wait_for(condition, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"Timed out waiting for {what}.")


def release_with_scenarios(metric_count: int):
    writer = OfflineConfigurationFactory()
    metrics = [MetricFactory() for _ in range(metric_count)]
    for metric in metrics:
        scenarios_generate(metric_version=current_version(metric), configuration=writer)
    # Unpublished: the registry's immutability triggers stop a transactional flush of published
    # releases at teardown.
    return release_with("1.0.0", metrics)


def run_status(run) -> str:
    run.refresh_from_db()
    return run.status


def test_a_worker_completes_an_offline_run(celery_worker):
    release = release_with_scenarios(1)
    run = runs.run_create(
        name="Worker run",
        release=release,
        targets=[OfflineConfigurationFactory()],
        simulator=OfflineConfigurationFactory(),
        judge=OfflineConfigurationFactory(),
    )
    runs.run_launch(run=run)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=120, what="the run")
    assert run.conversations_completed == 6
    assert Judgment.objects.filter(conversation__run=run).count() == 18


def test_killing_a_worker_mid_run_and_resuming_completes_it_exactly_once(
    celery_worker_factory, fake_openai
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05  # slow enough to kill the worker with work in flight
    release = release_with_scenarios(2)
    run = runs.run_create(
        name="Kill and resume",
        release=release,
        targets=[fake.target],
        simulator=fake.simulator,
        judge=fake.judge,
    )
    runs.run_launch(run=run)
    # Short leases: the killed worker's claims expire within seconds, not a minute.
    quick = {"RUN_CLAIM_LEASE_SECONDS": "2", "RUN_REAPER_INTERVAL_SECONDS": "1"}
    first = celery_worker_factory(concurrency=2, extra_env=quick)
    wait_for(
        lambda: Turn.objects.filter(conversation__run=run).count() >= 10,
        timeout=90,
        what="some turns",
    )
    first.kill()
    assert run_status(run) == RunStatus.RUNNING
    assert Conversation.objects.filter(run=run, status=ConversationStatus.RUNNING).exists()

    celery_worker_factory(concurrency=2, beat=True, extra_env=quick)
    # A maintainer resuming by hand changes nothing: conversations still claimed by the dead
    # worker are skipped until their lease expires, then the reaper hands them out once.
    runs.run_launch(run=run)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=240, what="the resumed run")

    conversations = Conversation.objects.filter(run=run)
    assert conversations.count() == 12  # one per (scenario, target)
    assert set(conversations.values_list("status", flat=True)) == {ConversationStatus.COMPLETED}
    per_conversation = conversations.annotate(
        n_turns=Count("turns", distinct=True), n_judgments=Count("judgments", distinct=True)
    )
    assert {(c.n_turns, c.n_judgments) for c in per_conversation} == {(8, 3)}
    run.refresh_from_db()
    assert run.conversations_completed == 12
