"""What a model call is made for, carried to the call log without threading it through calls.

    with call_attribution(run_id=run.pk, work_item="conversation:17", claim=3):
        chat(...)   # every LLMCall row written inside carries run_id, work_item and claim

A context variable rather than a parameter: the gateway's signature stays the same for every
caller, and each asyncio task (the batch engine) or thread keeps its own value.
"""

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Attribution:
    run_id: int | None = None
    work_item: str = ""
    claim: int | None = None


NONE = Attribution()
_current: ContextVar[Attribution] = ContextVar("llm_call_attribution", default=NONE)


def current() -> Attribution:
    return _current.get()


@contextlib.contextmanager
def call_attribution(
    *, run_id: int | None, work_item: str = "", claim: int | None = None
) -> Iterator[Attribution]:
    """Attribute the calls made inside to a run's work item (and the claim that made them)."""
    attribution = Attribution(run_id=run_id, work_item=work_item[:40], claim=claim)
    token = _current.set(attribution)
    try:
        yield attribution
    finally:
        _current.reset(token)
