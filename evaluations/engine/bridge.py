"""One event loop per process, and the calling thread serving it as its database thread.

Django's ORM is synchronous and a connection belongs to its thread, so the engine never touches
the ORM on the loop: the thread that called `run_blocking` (the Celery task's thread, or a
test's, with its transaction) executes every database job the loop submits (`Bridge.run`),
in order, on its one connection. The loop lives in a daemon thread that outlives a task, so
its HTTP clients and connection pools serve every batch the process takes.
"""

import asyncio
import os
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any

_loop: asyncio.AbstractEventLoop | None = None
_loop_pid: int | None = None
_loop_lock = threading.Lock()


def engine_loop() -> asyncio.AbstractEventLoop:
    """The process's engine loop (a forked worker starts its own)."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, daemon=True, name="engine-loop")
            thread.start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


class Bridge:
    """Database jobs from the loop, executed by the thread that waits in `run_blocking`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()

    async def run(self, fn: Callable, *args: Any) -> Any:
        future = self.loop.create_future()
        self.jobs.put((fn, args, future))
        return await future

    def _settle(self, future: asyncio.Future, result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def serve(self, done: "asyncio.Future | Any") -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, args, future = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                result, error = None, exc
            self.loop.call_soon_threadsafe(self._settle, future, result, error)


def run_blocking(main: Callable[[Bridge], Coroutine]) -> Any:
    """Run `main(bridge)` on the engine loop; serve its database jobs here until it ends."""
    loop = engine_loop()
    bridge = Bridge(loop)
    future = asyncio.run_coroutine_threadsafe(main(bridge), loop)
    future.add_done_callback(lambda _f: bridge.jobs.put(None))
    try:
        bridge.serve(future)
    except BaseException:
        # A time limit or a shutdown interrupted this thread: nobody serves the batch's
        # database jobs any more, so stop it (its claims lapse and the reaper resends them).
        future.cancel()
        raise
    return future.result()
