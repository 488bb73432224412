"""Whether a process on this host still runs: for files and names that carry their owner's pid
(call journals, the demo's seed progress, test databases)."""

import contextlib
import os
from pathlib import Path


def process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    # A killed process nobody has reaped yet (a zombie) still answers the signal.
    with contextlib.suppress(OSError):
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    return True
