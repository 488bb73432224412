"""What the runner needs of a kind of work item (conversations, rubric replies), and what a kind
may ask of the runner.

The runner (`runner.Engine`) owns what every item shares: claims and their leases, the
recorder, the gateway and its permits, the failure and retry policy. A kind says how its items
are claimed and read, what their steps are and how they close, and how one is failed.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from django.db.models import Model

from ..services.claims import Claim

if TYPE_CHECKING:
    from .bridge import Bridge


class Lost(Exception):
    """The item's claim was found lost at a flush: stop without writing."""


class Parked(Exception):
    """The item asked for something a provider's batch will answer: park it until then."""


class Loaded(Protocol):
    claim: Claim | None
    finished: Model | None  # failed at once (its target is paused for the run)
    may_hit: bool

    @property
    def target_id(self) -> int: ...


class Steps(Protocol):
    """What a kind's `work` may ask of the runner (`runner.Engine` is the one implementation):
    the kind depends on this, not on the runner, which depends on the kinds."""

    async def drive(self, steps: Any, claim: Claim | None, may_hit: bool) -> Any:
        """Run the item's step generator: calls on the loop, rows to the recorder."""

    async def flush_held(self, claim: Claim) -> None:
        """Return once the item's rows so far are written; raise `Lost` if its claim was lost."""


class WorkKind(Protocol):
    def __init__(self, bridge: Bridge) -> None: ...

    def load(self, ids: list[int], worker: str) -> list[Any]:
        """Claim the items and read what is stored (database thread); one result per id, None
        when there is nothing to do for this delivery."""

    def attribution(self, loaded: Any) -> AbstractContextManager:
        """Attribute the item's calls to it and its run in the call log."""

    async def work(self, engine: Steps, loaded: Any) -> Model:
        """Run the item's steps on the engine and close it under its claim."""

    def mark_failed(self, claim: Claim, message: str, error: Exception) -> Model:
        """Fail the item with `message` (database thread)."""
