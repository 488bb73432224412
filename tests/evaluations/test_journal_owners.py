"""Whose journal is replayed: every one whose owner is dead (its lock is free), whatever host
name or pid its name carries, and none whose owner lives (it holds the lock)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evaluations.engine import journal
from llm.models import CallOutcome, LLMCall
from llm.recording import CallRecorder
from tests.evaluations.test_journal import Sink
from tests.llm.factories import ModelConfigurationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

# A process that holds a journal's lock as its live owner does, until it is killed.
OWNER = """
import fcntl, sys
file = open(sys.argv[1], "ab")
fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()
"""


def _left_behind(name: str) -> Path:
    """A journal with one answered and one unanswered attempt, closed (its lock released) and
    renamed as its owner would have named it."""
    file = journal.Journal()
    recorder = CallRecorder(
        configuration=ModelConfigurationFactory(),
        role="target",
        purpose="tests.journal",
        fingerprint="f" * 64,
        sink=Sink(file),
    )
    messages = [{"role": "user", "content": "Hello"}]
    recorder.sending(messages=messages, parameters={})
    recorder.record(
        messages=messages, parameters={}, outcome=CallOutcome.SUCCESS, response_text="Hi"
    )
    recorder.sending(messages=messages, parameters={"max_tokens": 9})
    file.close(written=False)
    return file.path.rename(file.path.with_name(name))


@pytest.mark.parametrize(
    "owner",
    [
        # A restarted container: the dead worker's host name is nobody's any more.
        "another-host-{pid}",
        # A reused pid: the dead worker's host name and pid now belong to this live process.
        "{host}-{pid}",
    ],
)
def test_a_dead_owners_journal_is_replayed_whatever_host_and_pid_it_names(
    owner, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    prefix = owner.format(host=socket.gethostname(), pid=os.getpid())
    path = _left_behind(f"{prefix}-0123456789abcdef-1.jsonl")

    assert journal.journals_replay() == 2
    assert sorted(LLMCall.objects.values_list("outcome", flat=True)) == sorted(
        [CallOutcome.SUCCESS, CallOutcome.UNKNOWN]
    )
    assert not path.exists()


def test_a_live_owners_journal_is_left_alone_until_it_dies(settings, tmp_path):
    """The owner is another process, named with this live process's host and pid: only its
    lock tells that it lives, and once it is killed the journal is replayed."""
    settings.VAR_DIR = tmp_path
    path = _left_behind(f"{socket.gethostname()}-{os.getpid()}-fedcba9876543210-1.jsonl")
    owner = subprocess.Popen(  # noqa: S603 - fixed argument list
        [sys.executable, "-c", OWNER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout.readline().strip() == "locked"
        assert journal.journals_replay() == 0
        assert path.exists()
        assert LLMCall.objects.count() == 0
    finally:
        owner.kill()
        owner.wait()
        owner.stdin.close()
        owner.stdout.close()

    assert journal.journals_replay() == 2
    assert not path.exists()


def test_a_journal_in_use_in_this_process_is_locked_against_other_processes(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    file = journal.Journal()
    taken = subprocess.run(  # noqa: S603 - fixed argument list
        [sys.executable, "-c", OWNER, str(file.path)],
        input="",
        capture_output=True,
        text=True,
        check=False,
    )
    assert taken.returncode != 0
    assert "BlockingIOError" in taken.stderr
    file.close(written=True)
    assert not file.path.exists()


def test_a_journal_named_before_the_lock_is_judged_by_its_pid_on_its_host(settings, tmp_path):
    """Files of workers still running the earlier release carry no lock: a live pid on this host
    or another host's name keeps them; this host's dead pid has them replayed."""
    settings.VAR_DIR = tmp_path
    host = socket.gethostname()
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],  # noqa: S603
        capture_output=True,
        text=True,
        check=True,
    )
    live = _left_behind(f"{host}-{os.getppid()}-1.jsonl")
    elsewhere = _left_behind(f"another-host-{os.getppid()}-2.jsonl")
    dead = _left_behind(f"{host}-{gone.stdout.strip()}-3.jsonl")

    assert journal.journals_replay() == 2
    assert live.exists()
    assert elsewhere.exists()
    assert not dead.exists()
