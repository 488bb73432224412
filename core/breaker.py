"""A circuit breaker: a budget for a dependency that fails, on top of its timeout.

A timeout bounds one call; a dependency that hangs would still cost that timeout on every call,
so a page making twenty cache calls would wait twenty timeouts. The breaker opens at the first
failure and then refuses calls at once (``CircuitOpen``) for ``open_seconds``; after that one
call is let through as a probe while the others are still refused, and the probe's answer
closes the breaker or opens it for another window. A caller therefore pays at most one timeout
per window, however many calls it makes.

One breaker per dependency and process, shared by its threads (web workers are threaded); the
state changes under a lock, the calls themselves run outside it. It says once that it opened
and once that it closed, not once per refused call.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class CircuitOpen(ConnectionError):
    """Raised instead of calling a dependency the breaker is skipping."""


class BreakerState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    PROBING = "probing"  # one call is trying the dependency again; the others are refused


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        *,
        open_seconds: float,
        failures: tuple[type[BaseException], ...],
        logger: logging.Logger,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.open_seconds = open_seconds
        self._failures = failures
        self._logger = logger
        self._clock = clock
        self._lock = threading.Lock()
        self._state = BreakerState.CLOSED
        self._opened_at = 0.0  # when the outage began, for the closing message
        self._retry_at = 0.0  # when the next probe may go
        self._probe_started = 0.0
        self._last_error = ""

    @property
    def state(self) -> BreakerState:
        with self._lock:
            return self._state

    def call(self, operation: Callable[[], T]) -> T:
        """Run ``operation`` unless the breaker is open; a failure named in ``failures`` opens
        it. Any other exception means the dependency answered, so it counts as success."""
        probe = self._admit()
        try:
            result = operation()
        except self._failures as error:
            self._failed(probe, error)
            raise
        except Exception:
            self._answered(probe)
            raise
        except BaseException:  # interrupted, not answered: let the next call probe instead
            self._abandoned(probe)
            raise
        self._answered(probe)
        return result

    def _admit(self) -> bool:
        """Whether the call may go, and whether it is the probe; raises CircuitOpen if not."""
        with self._lock:
            now = self._clock()
            if self._state is BreakerState.CLOSED:
                return False
            # A probe that never reported back (its thread died) must not hold the breaker
            # open for good: after a window another call probes.
            probe_due = (
                now >= self._retry_at
                if self._state is BreakerState.OPEN
                else now - self._probe_started >= self.open_seconds
            )
            if probe_due:
                self._state = BreakerState.PROBING
                self._probe_started = now
                return True
            wait = max(0.0, self._retry_at - now)
            raise CircuitOpen(
                f"{self.name} is skipped for {wait:.0f} more s after {self._last_error}"
            )

    def _failed(self, probe: bool, error: BaseException) -> None:
        with self._lock:
            now = self._clock()
            if self._state is BreakerState.CLOSED:
                self._state = BreakerState.OPEN
                self._opened_at = now
                self._retry_at = now + self.open_seconds
                self._last_error = f"{type(error).__name__}: {error}"
                self._logger.warning(
                    "%s unavailable (%s): skipping it for %g s at a time until it answers",
                    self.name,
                    self._last_error,
                    self.open_seconds,
                )
            elif probe:
                self._state = BreakerState.OPEN
                self._retry_at = now + self.open_seconds
                self._last_error = f"{type(error).__name__}: {error}"
            # A call that began before the breaker opened and failed since changes nothing.

    def _answered(self, probe: bool) -> None:
        if not probe:
            return  # closed already, or a call begun before the outage: only the probe decides
        with self._lock:
            self._state = BreakerState.CLOSED
            self._logger.info(
                "%s answers again after %.0f s", self.name, self._clock() - self._opened_at
            )

    def _abandoned(self, probe: bool) -> None:
        if probe:
            with self._lock:
                self._state = BreakerState.OPEN  # _retry_at has passed: the next call probes
