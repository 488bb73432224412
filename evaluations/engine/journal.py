"""An append-only local journal of the engine's model calls, replayed after a crash. The recorder
writes the call log in bulk every ENGINE_FLUSH_SECONDS, so a killed worker would lose the
attempts of its last window — and those it had sent but not yet heard back from. Each attempt is
therefore journaled as its request is written to its connection ("sent": its row with outcome
unknown; `llm.egress_http.on_sent`) and again when recorded ("done": its row with the reply),
as lines of JSON in a file of this batch (ENGINE_JOURNAL_DIR, default VAR_DIR/journal, then
<database>/<host>-<pid>-<instance>-<n>.jsonl, the instance a random id drawn per process; host
and pid only tell an operator where it came from).

Durability (the fsync policy: none). Each line is handed to the operating system with one
write(2) before the request's bytes, and never fsync'ed: a killed or crashed worker (SIGKILL, the
OOM killer, a container stopped) loses nothing journaled, but a power cut or kernel crash loses
what the kernel had not yet written back — on Linux's defaults at most the last ~30 s
(vm.dirty_expire_centisecs) of lines, which is the window the call log's bulk writes had not
reached yet. An fsync per line would cost a disk flush (milliseconds) per model call, and one per
batch flush guards nothing: by then the rows are in the database.

The journal guards the call log and never stands in its way: when its file cannot be written (a
full disk, a read-only or missing folder) the batch says so once in the log and records without
it, as before the journal existed (a kill then loses at most the last ENGINE_FLUSH_SECONDS of
its call log); `failure`/`failed_at` say why and when, for the run page. The file is removed
once its batch's rows are all written.

Liveness. The owner holds an exclusive flock(2) on its file from before its first line until
it closes it, and the kernel drops that lock the moment the process dies, however it dies.
A file whose lock can be taken has no live owner: the next batch and the reaper replay it,
whatever host name or pid its name carries (a restarted container has a new host name, and a
reused pid may belong to a live stranger), and every attempt the call log lacks is inserted as
journaled — with its reply, or as "outcome unknown" with its request — and the file removed.
The folder must be one whose locks every process that can see it shares: a local disk, or a
volume the containers of one host share (NFSv4 also carries locks between hosts). Files named
<host>-<pid>-<n>.jsonl, written before the lock, are still judged by their pid on their own host.
Attempts are written on their natural key, so replaying twice, or a row the recorder wrote
meanwhile, adds nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import itertools
import json
import logging
import os
import re
import secrets
import socket
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from core.processes import process_alive
from llm.bulk import calls_restore_bulk
from llm.models import LLMCall, PromptText

logger = logging.getLogger(__name__)
_FIELDS = [f.attname for f in LLMCall._meta.concrete_fields if f.attname not in ("id",)]
_numbers = itertools.count(1)
_open: set[Path] = set()  # this process's journals still in use
# Names of files written under the lock, and of those written before it (judged by pid).
_LOCKED = re.compile(r"^.+-\d+-[0-9a-f]{16}-\d+\.jsonl$")
_LEGACY = re.compile(r"^(?P<host>.+)-(?P<pid>\d+)-\d+\.jsonl$")
# Unique to this process, whatever its host name and pid: a file of a dead process sharing
# both (a restarted container) is never appended to, or removed, as ours.
_instance = secrets.token_hex(8)


def _new_instance() -> None:
    global _instance
    _instance = secrets.token_hex(8)


# A forked worker is another process: its journals must not share its parent's names.
os.register_at_fork(after_in_child=_new_instance)


def journal_dir() -> Path:
    """This database's journals: two deployments (or test runs) sharing a folder must never
    replay each other's calls into the wrong call log."""
    db = connection.settings_dict
    name = "|".join(str(db.get(part) or "") for part in ("ENGINE", "HOST", "PORT", "NAME"))
    root = Path(settings.ENGINE_JOURNAL_DIR or Path(settings.VAR_DIR) / "journal")
    return root / hashlib.blake2b(name.encode(), digest_size=8).hexdigest()


class Journal:
    """One batch's journal file."""

    def __init__(self) -> None:
        name = f"{socket.gethostname()}-{os.getpid()}-{_instance}-{next(_numbers)}.jsonl"
        self.path = journal_dir() / name
        self._file: BinaryIO | None = None
        # Why and when the journal stopped, if it did: the batch goes on recording without it.
        self.failure: OSError | None = None
        self.failed_at: datetime | None = None
        self._prompts: set[str] = set()
        self._writing = True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = _create_locked(self.path)
        except OSError as error:
            self._stop(error)
            return
        _open.add(self.path)

    @property
    def failure_reason(self) -> str:
        """Why the journal stopped, for the run page: the host and the system's own words."""
        if self.failure is None:
            return ""
        return f"{socket.gethostname()}: {self.failure.strerror or self.failure}"

    def write(self, op: str, call: LLMCall, prompt: PromptText) -> None:
        if self._file is None or not self._writing:
            return
        line = {"op": op, "call": {name: getattr(call, name) for name in _FIELDS}}
        first = prompt.sha256 not in self._prompts
        if first:
            line["messages"] = prompt.messages
        data = json.dumps(line, default=str).encode() + b"\n"
        try:
            if self._file.write(data) != len(data):
                # A short write: the disk filled mid-line, and anything after it would be glued
                # to the cut-off line and lost with it.
                raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (a short write)")
        except OSError as error:
            # Never raised into the engine: the row this line guards is recorded all the same.
            self._stop(error)
            return
        if first:
            self._prompts.add(prompt.sha256)

    def _stop(self, error: OSError) -> None:
        self.failure = error
        self.failed_at = timezone.now()
        logger.warning(
            "The call journal %s cannot be written (%s): this batch records its calls without "
            "it, so a worker killed before its next flush would lose the attempts of that "
            "window. Free space (or fix the folder) under %s.",
            self.path.name,
            error,
            self.path.parent,
        )
        # The file stays open, and locked, until the batch ends: what it already holds stays
        # useful to a replay (a line cut off is skipped), which must not start while the batch
        # may still write the rows it guards.
        self._writing = False

    def close(self, *, written: bool) -> None:
        """Close the file; remove it when everything it holds is in the database."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        if self.path not in _open:
            return
        _open.discard(self.path)
        if written:
            self.path.unlink(missing_ok=True)


def journals_replay() -> int:
    """Restore the attempts of every journal in this database's folder whose owner is gone;
    returns how many attempts the files held (those already in the call log are skipped)."""
    folder = journal_dir()
    if not folder.is_dir():
        return 0
    restored = 0
    for path in sorted(folder.iterdir()):
        if path in _open or not path.name.endswith(".jsonl") or _legacy_owner_alive(path):
            continue
        with _owner_gone(path) as gone:
            if gone:
                restored += _replay(path)
    return restored


def _create_locked(path: Path) -> BinaryIO:
    """Open the new file and lock it before a line is written. A replay may take the lock of
    the still empty file first and remove it: then the owner sees another inode at its path."""
    for _try in range(3):
        file = path.open("ab", buffering=0)  # unbuffered: each line reaches the OS as written
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.path.samestat(os.fstat(file.fileno()), path.stat()):
                return file
        except (BlockingIOError, FileNotFoundError):
            pass
        file.close()
    raise OSError(errno.EBUSY, f"{path.name} was taken by a replay while being created")


@contextlib.contextmanager
def _owner_gone(path: Path):
    """Yield whether nobody holds the file's lock, holding it meanwhile (one replayer)."""
    try:
        file = path.open("rb")
    except OSError:  # replayed and removed by another process meanwhile
        yield False
        return
    with file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False  # its owner lives (or another process is replaying it)
            return
        # Taken between our open and our lock by a replayer that has removed it since?
        try:
            ours = os.path.samestat(os.fstat(file.fileno()), path.stat())
        except FileNotFoundError:
            ours = False
        yield ours


def _replay(path: Path) -> int:
    try:
        calls, prompts = _read(path)
        calls_restore_bulk(calls=calls, prompts=prompts)
    except (OSError, ValueError, DatabaseError) as error:
        logger.warning("Could not replay the call journal %s: %s", path, error)
        return 0
    if calls:
        unknown = sum(call.outcome == "unknown" for call in calls)
        logger.warning(
            "Replayed %s journaled attempts (%s with their outcome unknown) from %s",
            len(calls),
            unknown,
            path.name,
        )
    path.unlink(missing_ok=True)
    return len(calls)


def _legacy_owner_alive(path: Path) -> bool:
    """A file named before the lock: its owner took none, so its pid on its host decides."""
    if _LOCKED.match(path.name):
        return False
    legacy = _LEGACY.match(path.name)
    if legacy is None:
        return True  # not a journal of ours: left alone
    if legacy["host"] != socket.gethostname():
        return True  # cannot be told from here
    pid = int(legacy["pid"])
    return pid != os.getpid() and process_alive(pid)


def _read(path: Path) -> tuple[list[LLMCall], list[PromptText]]:
    calls: dict[tuple[str, int], LLMCall] = {}
    prompts: dict[str, PromptText] = {}
    with path.open("rb") as lines:
        for raw in lines:
            with contextlib.suppress(ValueError):  # a line cut off by the crash
                line = json.loads(raw)
                fields = line["call"]
                if "messages" in line:
                    prompts[fields["prompt_id"]] = PromptText(
                        sha256=fields["prompt_id"], messages=line["messages"]
                    )
                key = (fields["group_id"], fields["attempt"])
                # A reply replaces its "sent" line; a "sent" never replaces a reply.
                if line["op"] == "done" or key not in calls:
                    fields.pop("created_at", None)
                    calls[key] = LLMCall(**fields)
    return list(calls.values()), list(prompts.values())
