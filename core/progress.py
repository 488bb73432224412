"""The one shape of a progress callback, for long work that a bar or a page follows.

Whatever the work (a run's conversations, a demo seed step, a synthetic release), the worker
calls ``progress(done, total)`` with cumulative counts, and ``stage`` names the part under way
when the work has several ("metrics", "outcomes"). A caller that shows nothing passes
`progress_ignore` rather than None, so no producer has to test for a missing callback.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, done: int, total: int, stage: str = "") -> None: ...


def progress_ignore(done: int, total: int, stage: str = "") -> None:
    """A `Progress` that shows nothing."""
