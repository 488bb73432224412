"""What the limits backends share: the token counts, the window, a lease's lifetime."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet

from ..models import ModelConfiguration, RequestLease

WINDOW_SECONDS = 60.0
# The token limits' window: a minute, as providers count; module state so tests can shorten it.
TOKEN_WINDOW_SECONDS = 60.0
MAX_PACE_SECONDS = 3600.0  # a reset further off than this is a header to distrust


@dataclass(frozen=True)
class Tokens:
    """Tokens counted towards the per-minute token limits: reserved, then as used."""

    input: int = 0
    output: int = 0


NO_TOKENS = Tokens()


def lease_seconds() -> float:
    """How long a lease lives if never returned: longer than any request can take."""
    return settings.LLM_TIMEOUT_SECONDS + 30.0


def permit_lease_seconds() -> float:
    """How long an engine permit lives unless renewed. A permit pool renews the permits it
    holds a third of this apart (its maintenance ticks every 0.1 s), so a live process keeps
    them through any request, and a killed one's lapse within this time: with the per-call
    lease (`lease_seconds`, longer than any request), every worker killed at once left its
    slots held, and the run stalled, for 90 s."""
    return min(settings.LLM_PERMIT_LEASE_SECONDS, lease_seconds())


def has_token_limits(configuration: ModelConfiguration) -> bool:
    return bool(configuration.input_tokens_per_minute or configuration.output_tokens_per_minute)


def leases_held(leases: QuerySet[RequestLease], now: datetime) -> QuerySet[RequestLease]:
    """The one rule for a live request lease: not given back, and not yet expired at `now`."""
    return leases.filter(released_at=None, expires_at__gt=now)
