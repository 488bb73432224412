"""How many of a process's requests on one configuration may be under way at once: at most its
`max_concurrency`, and fewer while the provider is refusing for its rate limit.

The gate backs off and recovers the way TCP's congestion control does (additive increase,
multiplicative decrease): a 429 halves the number admitted at once (never below one), and each
run of as many answered requests as are admitted raises it by one, back up to the configured
limit. A provider's limit is often below what was configured (a new account's tier, other
clients on the same key), and sending the configured number again after every pause would meet
the same refusals, each one billed a request against the limit. The shared limits store (Redis
or the database) still caps every process together; this gate only holds this process back.
"""

import asyncio
import contextlib
from collections import deque

from django.conf import settings


class AdmissionGate:
    """An asyncio semaphore of `limit` slots whose usable number (`ceiling`) moves between one
    and `limit`: `backoff()` on a refusal for rate, `succeeded()` after each answer."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ceiling = limit
        self.active = 0
        self._answered = 0  # answers since the ceiling last moved
        self._waiters: deque[asyncio.Future] = deque()

    async def acquire(self) -> None:
        if self.active < self.ceiling and not self._waiters:
            self.active += 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release()  # admitted as it gave up: the slot goes to the next in line
            else:
                future.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(future)
            raise

    def release(self) -> None:
        self.active -= 1
        self._admit()

    def backoff(self) -> None:
        """The provider refused for its rate limit: admit half as many (at least one)."""
        if not settings.LLM_ADAPTIVE_CONCURRENCY:
            return
        self.ceiling = max(1, self.ceiling // 2)
        self._answered = 0

    def succeeded(self) -> None:
        """An answer came back: after as many answers as are admitted, admit one more."""
        if self.ceiling >= self.limit:
            return
        self._answered += 1
        if self._answered >= self.ceiling:
            self.ceiling += 1
            self._answered = 0
            self._admit()

    def _admit(self) -> None:
        while self._waiters and self.active < self.ceiling:
            future = self._waiters.popleft()
            if not future.done():
                self.active += 1
                future.set_result(None)
