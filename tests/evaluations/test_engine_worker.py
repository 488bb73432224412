"""The batch engine in real Celery workers: hundreds in flight, a kill mid-batch (conversations
and rubric replies), shared limits."""

import shutil
import subprocess
import uuid

import pytest
from django.db.models import Count, Q, Sum

from evaluations.models import (
    Conversation,
    ConversationStatus,
    EvaluationRun,
    RubricGrading,
    RubricResponse,
    RunStatus,
)
from evaluations.services import runs
from llm.models import CallOutcome, LLMCall
from tests.evaluations.conftest import FakeModels
from tests.evaluations.factories import EvaluationRunFactory, ScenarioFactory
from tests.evaluations.test_run_worker import _taxonomy, run_status, wait_for  # noqa: F401
from tests.fake_openai import rubric_grader_reply
from tests.rubrics.factories import RubricItemFactory

pytestmark = [
    pytest.mark.worker,
    pytest.mark.slow(reason="hundreds of conversations through real Celery workers"),
]
FAST_RECOVERY = {
    "RUN_CLAIM_LEASE_SECONDS": "2",
    "RUN_REAPER_INTERVAL_SECONDS": "1",
    "RUN_REDISPATCH_AFTER_SECONDS": "4",
    "RUN_TASK_RETRY_BACKOFF_SECONDS": "0.5",
}


def _running_run(fake: FakeModels, *, conversations: int, turns: int, judgments: int, **scenario):
    run = EvaluationRunFactory(
        simulator=fake.simulator,
        judge=fake.judge,
        targets=[fake.target],
        typo_rate=0.0,
        turns=turns,
        judgments_per_conversation=judgments,
        status=RunStatus.RUNNING,
        conversations_total=conversations,
    )
    shared = ScenarioFactory(**scenario)
    Conversation.objects.bulk_create(
        Conversation(run=run, scenario=shared, target=fake.target, replicate=replicate)
        for replicate in range(conversations)
    )
    return run


def _wait_for_completion(run: EvaluationRun, *workers, timeout: float) -> None:
    try:
        wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=timeout, what="the run")
    except AssertionError as error:
        logs = "\n".join(worker.log()[-3000:] for worker in workers)
        raise AssertionError(f"{error}\n{logs}") from None


def _assert_exact(run: EvaluationRun, *, conversations: int, turns: int, judgments: int) -> None:
    rows = Conversation.objects.filter(run=run).annotate(
        n_turns=Count("turns", distinct=True), n_judgments=Count("judgments", distinct=True)
    )
    assert rows.count() == conversations
    assert {(c.status, c.n_turns, c.n_judgments) for c in rows} == {
        (ConversationStatus.COMPLETED, turns, judgments)
    }
    run.refresh_from_db()
    assert (run.conversations_completed, run.conversations_failed) == (conversations, 0)


def test_five_hundred_conversations_with_256_in_flight_through_one_worker(
    celery_worker_factory, fake_openai, settings
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 3.0  # long enough that a loaded 2-core machine keeps 256 waiting
    settings.ENGINE_BATCH_SIZE = 512  # one batch: 256 in flight, the next starts as one ends
    run = _running_run(fake, conversations=512, turns=2, judgments=1, anchors=[])
    worker = celery_worker_factory(concurrency=1, extra_env={"ENGINE_CONCURRENCY": "256"})
    runs.run_dispatch(run_id=run.pk)
    _wait_for_completion(run, worker, timeout=150)

    _assert_exact(run, conversations=512, turns=2, judgments=1)
    calls = LLMCall.objects.filter(run_id=run.pk)
    outcomes = dict(calls.values_list("outcome").annotate(n=Count("pk")))
    # Two exchanges, the fidelity check and one judgment each, each made once; every attempt the
    # server answered
    # is logged (attempts that never reached it, and cache hits, are logged as such).
    assert outcomes.get(CallOutcome.SUCCESS) == 512 * 6, outcomes
    unanswered = [CallOutcome.CACHED, CallOutcome.CONNECTION_ERROR, CallOutcome.TIMEOUT]
    answered = calls.exclude(outcome__in=unanswered).count()
    # A call that timed out (or lost its connection) on a loaded machine may or may not have
    # reached the server before the client gave up: each such row may stand for one request.
    undecided = calls.filter(outcome__in=[CallOutcome.CONNECTION_ERROR, CallOutcome.TIMEOUT])
    assert answered <= fake_openai.request_count <= answered + undecided.count(), outcomes
    # One process held (nearly) its whole concurrency in flight, never more.
    assert 224 <= fake_openai.max_in_flight <= 256


@pytest.mark.faults
def test_a_worker_killed_mid_batch_loses_nothing_and_repeats_no_completed_call(
    celery_worker_factory, fake_openai, settings
):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    settings.ENGINE_BATCH_SIZE = 24
    run = _running_run(fake, conversations=48, turns=4, judgments=3)
    doomed = celery_worker_factory(concurrency=1, extra_env=FAST_RECOVERY)
    runs.run_dispatch(run_id=run.pk)
    wait_for(
        lambda: LLMCall.objects.filter(run_id=run.pk).count() >= 150,
        timeout=90,
        what="calls in progress",
    )
    doomed.kill()
    assert Conversation.objects.filter(run=run, status=ConversationStatus.RUNNING).exists()
    celery_worker_factory(concurrency=1, beat=True, extra_env=FAST_RECOVERY)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=150, what="the run")

    _assert_exact(run, conversations=48, turns=4, judgments=3)
    # A call whose result was stored is never made again: its row and its result are written
    # in one transaction, and what was only logged comes back as a cache hit. A reply the
    # killed worker had received but not yet stored is in the log too (replayed from its
    # journal, before the next batch starts), and in the response cache: that request, asked
    # again, is answered from the cache. So each conversation has exactly one successful
    # request per turn, judgment and anchor check, and no request reached the server twice.
    success = Q(outcome=CallOutcome.SUCCESS)
    calls = LLMCall.objects.filter(run_id=run.pk)
    per_item = calls.values("work_item").annotate(
        **{
            role: Count("fingerprint", filter=success & Q(purpose=purpose), distinct=True)
            for role, purpose in (
                ("simulator", "evaluations.simulate_user"),
                ("target", "evaluations.target_reply"),
                ("judge", "evaluations.judge_verdict"),
                ("anchors", "evaluations.anchor_check"),
            )
        }
    )
    assert len(per_item) == 48
    assert {(r["simulator"], r["target"], r["judge"], r["anchors"]) for r in per_item} == {
        (4, 4, 3, 1)
    }
    repeated = calls.filter(success).values("fingerprint").annotate(n=Count("pk")).filter(n__gt=1)
    assert not repeated, list(repeated)
    run.refresh_from_db()
    assert run.conversations_completed == 48


@pytest.mark.faults
def test_a_worker_killed_while_attempts_queue_for_a_slot_logs_only_requests_that_were_sent(
    celery_worker_factory, fake_openai, settings
):
    """Most of a batch's attempts wait for one of a few slots: after a SIGKILL the call log
    holds an HTTP row for every request the endpoint received, and only the attempts that held
    a slot (at most the slots of the three configurations) come back with their outcome unknown.
    Those are journaled as sent once they hold their slot, a moment before their bytes leave, so
    an unknown row may stand for a request the kill stopped first: rows may exceed requests by
    the unknown ones, never more (queued attempts used to be journaled too: 216 rows for 200)."""
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.1
    slots = 4
    for configuration in (fake.simulator, fake.target, fake.judge):
        configuration.max_concurrency = slots
        configuration.save()
    settings.ENGINE_BATCH_SIZE = 24
    run = _running_run(fake, conversations=24, turns=3, judgments=1, anchors=[])
    recovery = {**FAST_RECOVERY, "LLM_LIMITS_KEY_PREFIX": f"test-kill:{uuid.uuid4().hex}"}
    doomed = celery_worker_factory(concurrency=1, extra_env=recovery)
    runs.run_dispatch(run_id=run.pk)
    wait_for(lambda: fake_openai.request_count >= 60, timeout=90, what="calls in progress")
    doomed.kill()
    survivor = celery_worker_factory(concurrency=1, beat=True, extra_env=recovery)
    _wait_for_completion(run, survivor, timeout=150)

    _assert_exact(run, conversations=24, turns=3, judgments=1)
    calls = LLMCall.objects.filter(run_id=run.pk).exclude(outcome=CallOutcome.CACHED)
    unknown = calls.filter(outcome=CallOutcome.UNKNOWN).count()
    print(
        f"endpoint received {fake_openai.request_count}, HTTP rows {calls.count()}, "
        f"{unknown} of unknown outcome"
    )
    assert fake_openai.request_count <= calls.count() <= fake_openai.request_count + unknown
    assert unknown <= 3 * slots


@pytest.mark.faults
def test_a_run_whose_journal_disk_is_full_completes_with_every_answered_call_logged(
    celery_worker_factory, fake_openai, settings, tmp_path
):
    """The journal on a 64 kB filesystem, full after a few dozen attempts: the run goes on
    without it and the call log still holds every request the endpoint answered."""
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    mount = [shutil.which("mount") or "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs"]
    mounted = subprocess.run([*mount, str(tiny)], capture_output=True, text=True, check=False)  # noqa: S603
    if mounted.returncode:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.strip()}")
    try:
        fake = FakeModels(fake_openai)
        fake_openai.latency = 0.02
        settings.ENGINE_BATCH_SIZE = 24
        run = _running_run(fake, conversations=48, turns=3, judgments=1, anchors=[])
        worker = celery_worker_factory(concurrency=1, extra_env={"ENGINE_JOURNAL_DIR": str(tiny)})
        runs.run_dispatch(run_id=run.pk)
        _wait_for_completion(run, worker, timeout=120)
        log = worker.log()
    finally:
        subprocess.run(["umount", str(tiny)], check=False)  # noqa: S603, S607

    _assert_exact(run, conversations=48, turns=3, judgments=1)
    calls = LLMCall.objects.filter(run_id=run.pk).exclude(outcome=CallOutcome.CACHED)
    tokens = calls.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    assert calls.count() == fake_openai.request_count
    assert tokens["p"] + tokens["c"] == fake_openai.billed_tokens
    assert "No space left on device" in log
    assert 1 <= log.count("cannot be written") <= 2  # at most once per batch (of two)


def test_limits_hold_across_two_worker_processes(celery_worker_factory, fake_openai, settings):
    fake = FakeModels(fake_openai)
    fake_openai.latency = 0.05
    for configuration in (fake.simulator, fake.target, fake.judge):
        configuration.max_concurrency = 3
        configuration.save()
    settings.ENGINE_BATCH_SIZE = 10
    run = _running_run(fake, conversations=40, turns=2, judgments=1, anchors=[])
    first = celery_worker_factory(concurrency=1)
    second = celery_worker_factory(concurrency=1)
    runs.run_dispatch(run_id=run.pk)
    _wait_for_completion(run, first, second, timeout=150)

    _assert_exact(run, conversations=40, turns=2, judgments=1)
    # Both processes drove conversations, each wanting ten calls in flight, yet no model ever
    # had more than its three at once.
    workers = set(Conversation.objects.filter(run=run).values_list("claimed_by", flat=True))
    assert len({name.split("@")[0] for name in workers}) == 2, (first.log(), second.log())
    peaks = fake_openai.max_in_flight_by_model
    assert max(peaks.values()) == 3, peaks
    assert set(peaks) == {"sim", "target", "judge"}
    assert all(peak <= 3 for peak in peaks.values()), peaks


@pytest.mark.faults
def test_a_worker_killed_mid_rubric_run_loses_nothing_and_repeats_no_completed_call(
    celery_worker_factory, fake_openai, settings
):
    """As for conversations: rubric replies graded one call per criterion, those of one reply
    at once, through a worker killed mid-batch and the reaper."""
    fake = FakeModels(fake_openai)
    fake.judge_reply = lambda request: rubric_grader_reply(
        request.messages[0]["content"], request.messages[-1]["content"]
    )
    fake_openai.latency = 0.5
    settings.ENGINE_BATCH_SIZE = 24
    items = RubricItemFactory.create_batch(72)
    run = EvaluationRunFactory(
        simulator=fake.simulator,
        judge=fake.judge,
        targets=[fake.target],
        status=RunStatus.RUNNING,
        rubric_grading=RubricGrading.PER_CRITERION,
    )
    run.rubric_items.set(items)
    RubricResponse.objects.bulk_create(
        RubricResponse(run=run, item=item, target=fake.target) for item in items
    )
    doomed = celery_worker_factory(concurrency=1, extra_env=FAST_RECOVERY)
    runs.run_dispatch(run_id=run.pk)
    # Killed while replies are being graded: replied, not yet done.
    wait_for(
        lambda: (
            RubricResponse.objects.filter(run=run, status=ConversationStatus.RUNNING)
            .exclude(reply="")
            .exists()
        ),
        timeout=90,
        what="grading in progress",
    )
    doomed.kill()
    assert RubricResponse.objects.filter(run=run, status=ConversationStatus.RUNNING).exists()
    celery_worker_factory(concurrency=1, beat=True, extra_env=FAST_RECOVERY)
    wait_for(lambda: run_status(run) == RunStatus.COMPLETED, timeout=150, what="the run")

    responses = RubricResponse.objects.filter(run=run).annotate(n_grades=Count("grades"))
    assert {(r.status, r.n_grades, bool(r.reply)) for r in responses} == {
        (ConversationStatus.COMPLETED, 3, True)
    }
    # Each reply asked once and each criterion graded once, however the kill fell: a result
    # stored is never asked again, and one only logged comes back as a cache hit.
    success = Q(outcome=CallOutcome.SUCCESS)
    calls = LLMCall.objects.filter(run_id=run.pk)
    per_item = calls.values("work_item").annotate(
        reply=Count("fingerprint", filter=success & Q(purpose="evaluations.rubric_reply")),
        grades=Count("fingerprint", filter=success & Q(purpose="evaluations.rubric_grade")),
    )
    assert len(per_item) == 72
    assert {(r["reply"], r["grades"]) for r in per_item} == {(1, 3)}
    repeated = calls.filter(success).values("fingerprint").annotate(n=Count("pk")).filter(n__gt=1)
    assert not repeated, list(repeated)
    # Every request the endpoint received is in the call log once: with its reply, or sent by
    # the killed worker and never heard back, "outcome unknown" (restored from its journal).
    known = calls.exclude(outcome__in=[CallOutcome.CACHED, CallOutcome.UNKNOWN]).count()
    unknown = calls.filter(outcome=CallOutcome.UNKNOWN).count()
    assert known == 72 * 4
    assert known <= fake_openai.request_count <= known + unknown
    # Grades of one reply were asked at once.
    assert fake_openai.max_in_flight > 24
