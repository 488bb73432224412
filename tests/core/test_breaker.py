"""The circuit breaker's states: closed, open after a failure, one probe after the window, and
closed again by a probe that is answered."""

import logging
import threading

import pytest

from core.breaker import BreakerState, CircuitBreaker, CircuitOpen

WINDOW = 30.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def breaker(clock):
    return CircuitBreaker(
        "Test store",
        open_seconds=WINDOW,
        failures=(TimeoutError,),
        logger=logging.getLogger("tests.breaker"),
        clock=clock,
    )


def _hang():
    raise TimeoutError("no answer within 1 s")


def _answer():
    return "value"


def test_a_closed_breaker_runs_every_call(breaker):
    assert [breaker.call(_answer) for _ in range(3)] == ["value"] * 3
    assert breaker.state is BreakerState.CLOSED


def test_the_first_failure_opens_it_and_later_calls_are_refused_without_running(breaker):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    assert breaker.state is BreakerState.OPEN
    ran = []
    with pytest.raises(CircuitOpen, match=r"skipped for 30 more s after TimeoutError"):
        breaker.call(lambda: ran.append(1))
    assert ran == []


def test_after_the_window_one_call_probes_and_its_answer_closes_the_breaker(breaker, clock):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    clock.now += WINDOW - 0.1
    with pytest.raises(CircuitOpen):
        breaker.call(_answer)
    clock.now += 0.1
    assert breaker.call(_answer) == "value"
    assert breaker.state is BreakerState.CLOSED
    assert breaker.call(_answer) == "value"


def test_a_failed_probe_opens_it_for_another_window(breaker, clock):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    clock.now += WINDOW
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    assert breaker.state is BreakerState.OPEN
    clock.now += WINDOW - 1
    with pytest.raises(CircuitOpen):
        breaker.call(_answer)
    clock.now += 1
    assert breaker.call(_answer) == "value"


def test_while_the_probe_runs_the_other_calls_are_refused(breaker, clock):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    clock.now += WINDOW
    inside, release = threading.Event(), threading.Event()

    def slow_answer():
        inside.set()
        release.wait(5)
        return "probe"

    results = []
    probe = threading.Thread(target=lambda: results.append(breaker.call(slow_answer)))
    probe.start()
    assert inside.wait(5)
    assert breaker.state is BreakerState.PROBING
    with pytest.raises(CircuitOpen):
        breaker.call(_answer)
    release.set()
    probe.join(5)
    assert results == ["probe"]
    assert breaker.state is BreakerState.CLOSED


def test_an_error_that_is_an_answer_does_not_open_it(breaker):
    def refused_value():
        raise ValueError("the store answered: wrong type")

    with pytest.raises(ValueError, match="wrong type"):
        breaker.call(refused_value)
    assert breaker.state is BreakerState.CLOSED


def test_a_call_begun_before_the_outage_neither_closes_nor_extends_it(breaker, clock):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    breaker._answered(probe=False)  # a call admitted while closed, answering late
    assert breaker.state is BreakerState.OPEN
    clock.now += WINDOW
    assert breaker.call(_answer) == "value"


def test_a_probe_that_never_reports_back_does_not_hold_it_open(breaker, clock):
    with pytest.raises(TimeoutError):
        breaker.call(_hang)
    clock.now += WINDOW
    assert breaker._admit() is True  # a probe whose thread then died without a word
    with pytest.raises(CircuitOpen):
        breaker.call(_answer)
    clock.now += WINDOW
    assert breaker.call(_answer) == "value"
    assert breaker.state is BreakerState.CLOSED


def test_it_says_once_that_it_opened_and_once_that_it_closed(breaker, clock, caplog):
    with caplog.at_level(logging.INFO, logger="tests.breaker"):
        with pytest.raises(TimeoutError):
            breaker.call(_hang)
        breaker._failed(probe=False, error=TimeoutError("late"))  # in flight before it opened
        for _ in range(5):
            with pytest.raises(CircuitOpen):
                breaker.call(_answer)
        clock.now += WINDOW
        with pytest.raises(TimeoutError):
            breaker.call(_hang)  # a failed probe: still the same outage
        clock.now += WINDOW
        breaker.call(_answer)
        breaker.call(_answer)
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2, messages
    assert messages[0].startswith("Test store unavailable (TimeoutError: no answer within 1 s)")
    assert messages[1] == "Test store answers again after 60 s"
