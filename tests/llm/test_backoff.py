from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from llm.transport import backoff_delay, retry_after_seconds


def test_retry_after_accepts_seconds_milliseconds_and_dates():
    assert retry_after_seconds({"retry-after": "2.5"}) == 2.5
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    later = format_datetime(datetime.now(tz=UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < retry_after_seconds({"retry-after": later}) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_capped_full_jitter(settings):
    settings.LLM_BACKOFF_BASE_SECONDS = 1
    settings.LLM_BACKOFF_MAX_SECONDS = 8
    delays = [backoff_delay(10, None) for _ in range(200)]
    assert all(0 <= d <= 8 for d in delays)
    assert max(delays) > 4  # jitter spans the whole capped window
    assert all(0 <= backoff_delay(0, None) <= 1 for _ in range(50))
    assert backoff_delay(0, 100) == 8
    assert backoff_delay(0, -3) == 0
