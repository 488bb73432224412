"""The database backend of the request limits: `RequestLease` rows written under a lock on the
configuration's row (see `llm.limits`)."""

import random
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from ..models import ModelConfiguration, RequestLease
from . import common
from .common import (
    MAX_PACE_SECONDS,
    NO_TOKENS,
    WINDOW_SECONDS,
    Tokens,
    has_token_limits,
    lease_seconds,
    leases_held,
)


class DatabaseLimits:
    poll_seconds = 0.05
    # A database error may have broken the caller's transaction: it is raised, not waited out.
    unreachable: tuple[type[BaseException], ...] = ()

    def try_acquire(
        self, configuration: ModelConfiguration, token: str, need: Tokens = NO_TOKENS
    ) -> float:
        now = timezone.now()
        with transaction.atomic():
            # The row lock serializes acquirers of one configuration (SQLite serializes all
            # writers anyway), so the count and the insert below cannot interleave.
            paced_until = (
                ModelConfiguration.objects.select_for_update()
                .filter(pk=configuration.pk)
                .values_list("paced_until", flat=True)
                .first()
            )
            if paced_until is not None and paced_until > now:
                return (paced_until - now).total_seconds()
            leases = RequestLease.objects.filter(configuration_id=configuration.pk)
            if configuration.max_concurrency:
                in_flight = leases_held(leases, now).count()
                if in_flight >= configuration.max_concurrency:
                    return self.poll_seconds
            window = leases.filter(acquired_at__gt=now - timedelta(seconds=WINDOW_SECONDS))
            rpm = configuration.requests_per_minute
            if rpm and window.count() >= rpm:
                oldest = window.order_by("acquired_at").values_list("acquired_at", flat=True)
                wait = (oldest[0] + timedelta(seconds=WINDOW_SECONDS) - now).total_seconds()
                return max(self.poll_seconds, wait)
            if has_token_limits(configuration):
                recent = leases.filter(
                    acquired_at__gt=now - timedelta(seconds=common.TOKEN_WINDOW_SECONDS)
                )
                wait = self._token_wait(configuration, recent, need, now)
                if wait:
                    return max(self.poll_seconds, wait)
            RequestLease.objects.create(
                configuration_id=configuration.pk,
                token=token,
                acquired_at=now,
                expires_at=now + timedelta(seconds=lease_seconds()),
                input_tokens=need.input,
                output_tokens=need.output,
            )
            if random.random() < 0.02:  # noqa: S311 - occasional pruning, not security
                leases.filter(acquired_at__lt=now - timedelta(seconds=2 * WINDOW_SECONDS)).filter(
                    # Returned, or expired: neither counts towards either limit any more.
                    **{"released_at__isnull": False}
                ).delete()
                leases.filter(expires_at__lt=now - timedelta(seconds=WINDOW_SECONDS)).delete()
        return 0.0

    @staticmethod
    def _token_wait(
        configuration: ModelConfiguration,
        window: "QuerySet[RequestLease]",
        need: Tokens,
        now: datetime,
    ) -> float:
        """0 when `need` fits the token window, else the seconds until enough has left it
        (the rule of the Redis script, read from the lease rows)."""
        sums = window.aggregate(input=Sum("input_tokens"), output=Sum("output_tokens"))
        held_in, held_out = sums["input"] or 0, sums["output"] or 0
        itpm = configuration.input_tokens_per_minute or 0
        otpm = configuration.output_tokens_per_minute or 0
        over_in = held_in + need.input - itpm if itpm and held_in else 0
        over_out = held_out + need.output - otpm if otpm and held_out else 0
        if over_in <= 0 and over_out <= 0:
            return 0.0
        rows = list(
            window.order_by("acquired_at").values_list(
                "acquired_at", "input_tokens", "output_tokens"
            )
        )
        free_at = rows[-1][0]
        for acquired_at, used_in, used_out in rows:
            over_in -= used_in
            over_out -= used_out
            if over_in <= 0 and over_out <= 0:
                free_at = acquired_at
                break
        return (free_at + timedelta(seconds=common.TOKEN_WINDOW_SECONDS) - now).total_seconds()

    def release(self, configuration_id: int, token: str) -> None:
        RequestLease.objects.filter(token=token).update(released_at=timezone.now())

    def settle(self, configuration_id: int, token: str, used: Tokens) -> None:
        # Counted from now, as in the Redis script: never freed before the provider frees them.
        # (The request-rate window reads the same time: later, so never looser either.)
        RequestLease.objects.filter(token=token).update(
            input_tokens=used.input, output_tokens=used.output, acquired_at=timezone.now()
        )

    def pace(self, configuration_id: int, seconds: float) -> None:
        until = timezone.now() + timedelta(seconds=min(seconds, MAX_PACE_SECONDS))
        ModelConfiguration.objects.filter(pk=configuration_id).filter(
            Q(paced_until__isnull=True) | Q(paced_until__lt=until)
        ).update(paced_until=until)
