"""An append-only local journal of the engine's model calls, replayed after a crash. The recorder
writes the call log in bulk every ENGINE_FLUSH_SECONDS, so a killed worker would lose the
attempts of its last window — and those it had sent but not yet heard back from. Each attempt is
therefore journaled once it holds its limit slot and is about to be sent ("sent": its row with
outcome unknown) and again when recorded ("done": its row with the reply), as lines of JSON in a
file of this batch (ENGINE_JOURNAL_DIR, default VAR_DIR/journal, then
<database>/<host>-<pid>-<n>.jsonl), handed to the operating system before the request leaves: a
SIGKILL keeps them (a power cut may lose the last lines). The journal guards the call log and
never stands in its way: when its file cannot be written (a full disk, a read-only or missing
folder) the batch says so once in the log and records without it, as before the journal existed
(a kill then loses at most the last ENGINE_FLUSH_SECONDS of its call log). The file is removed
once its batch's rows are all written. A file whose process is gone is replayed by the next
batch on the same host and by the reaper: every attempt the call log lacks is inserted as
journaled — with its reply, or as "outcome unknown" with its request — and the file removed.
Attempts are written on their natural key, so replaying twice, or a row the recorder wrote
meanwhile, adds nothing.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import logging
import os
import socket
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.db import DatabaseError, connection

from core.processes import process_alive
from llm.bulk import calls_restore_bulk
from llm.models import LLMCall, PromptText

logger = logging.getLogger(__name__)
_FIELDS = [f.attname for f in LLMCall._meta.concrete_fields if f.attname not in ("id",)]
_numbers = itertools.count(1)
_open: set[Path] = set()  # this process's journals still in use


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
        self.path = journal_dir() / f"{socket.gethostname()}-{os.getpid()}-{next(_numbers)}.jsonl"
        self._file: BinaryIO | None = None
        # Why the journal stopped, if it did: the batch goes on recording without it.
        self.failure: OSError | None = None
        self._prompts: set[str] = set()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Unbuffered: every line reaches the operating system as it is written.
            self._file = self.path.open("ab", buffering=0)
        except OSError as error:
            self._stop(error)
            return
        _open.add(self.path)

    def write(self, op: str, call: LLMCall, prompt: PromptText) -> None:
        if self._file is None:
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
        logger.warning(
            "The call journal %s cannot be written (%s): this batch records its calls without "
            "it, so a worker killed before its next flush would lose the attempts of that "
            "window. Free space (or fix the folder) under %s.",
            self.path.name,
            error,
            self.path.parent,
        )
        if self._file is not None:
            # What the file already holds stays useful to a replay; a line cut off is skipped.
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

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
    """Restore the attempts of this host's journals whose process is gone; returns how many
    attempts the files held (those already in the call log are skipped)."""
    folder = journal_dir()
    if not folder.is_dir():
        return 0
    host = socket.gethostname()
    restored = 0
    for path in sorted(folder.glob(f"{host}-*.jsonl")):
        if path in _open or _alive(path, host):
            continue
        try:
            calls, prompts = _read(path)
            calls_restore_bulk(calls=calls, prompts=prompts)
        except (OSError, ValueError, DatabaseError) as error:
            logger.warning("Could not replay the call journal %s: %s", path, error)
            continue
        if calls:
            unknown = sum(call.outcome == "unknown" for call in calls)
            logger.warning(
                "Replayed %s journaled attempts (%s with their outcome unknown) from %s",
                len(calls),
                unknown,
                path.name,
            )
        restored += len(calls)
        path.unlink(missing_ok=True)
    return restored


def _alive(path: Path, host: str) -> bool:
    pid = int(path.name[len(host) + 1 :].split("-", 1)[0])
    if pid == os.getpid():
        return False  # ours, and not open: its batch ended without writing everything
    return process_alive(pid)


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
