"""What the evaluations app tells the apps above it (`core.events`): each event its services
publish, as the payload its handlers receive."""

from __future__ import annotations

from dataclasses import dataclass

from core.events import Event


@dataclass(frozen=True)
class RunCompleted(Event):
    """An evaluation run finished with at least one conversation.

    `no_worker`: the run was processed in the publishing process (`run_evaluation --inline`),
    where no worker may be running to take up queued work: whoever derives figures from the
    run does so before the handler returns, so the caller finds them stored."""

    run_id: int
    no_worker: bool = False


@dataclass(frozen=True)
class RunDesignated(Event):
    """A run was made official or withdrawn, or marked (or unmarked) as its release's
    headline run."""

    run_id: int
