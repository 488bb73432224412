"""Database jobs of one kind, gathered while the database thread is busy with others.

Items submitted before the thread starts the job go into one call of `fn(items)`, which returns
one outcome per item (a value, or an exception that belongs to that item alone). On an idle
thread an item waits for nobody; under load the closes of many conversations share a
transaction and one statement per table.
"""

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from .bridge import Bridge


class Coalescer:
    def __init__(self, bridge: Bridge, fn: Callable[[list], list]) -> None:
        self.bridge = bridge
        self.fn = fn
        self.calls = 0  # jobs run (each served one or more items)
        self._lock = threading.Lock()  # the loop adds items, the database thread takes them
        self._open: list[tuple[Any, asyncio.Future]] | None = None

    async def submit(self, item: Any) -> Any:
        future = self.bridge.loop.create_future()
        with self._lock:
            batch, fresh = self._open, self._open is None
            if batch is None:
                batch = self._open = []
            batch.append((item, future))
        if fresh:
            asyncio.ensure_future(self._run(batch))
        return await future

    def _take(self, batch: list) -> list:
        with self._lock:
            if self._open is batch:
                self._open = None
            return list(batch)

    async def _run(self, batch: list) -> None:
        taken: list[tuple[Any, asyncio.Future]] = []

        def job() -> list:
            taken.extend(self._take(batch))
            self.calls += 1
            return self.fn([item for item, _future in taken])

        try:
            outcomes = await self.bridge.run(job)
        except Exception as error:  # noqa: BLE001 - every item of the job gets it
            for _item, future in taken or self._take(batch):
                future.done() or future.set_exception(error)
            return
        for (_item, future), outcome in zip(taken, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
