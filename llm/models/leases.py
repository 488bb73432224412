"""Request slots of rate-limited configurations, for the database limits backend."""

from django.db import models

from .configuration import ModelConfiguration


class RequestLease(models.Model):
    """A request slot of a rate-limited configuration (the database limits backend).

    Counts towards max_concurrency until released or expired, and towards requests_per_minute
    and the token-per-minute limits for a minute after `acquired_at`. See llm.limits.
    """

    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.CASCADE, related_name="+"
    )
    token = models.CharField(max_length=32, unique=True)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)
    # Reserved from the request's estimate, then corrected to the reply's usage: what counts
    # towards the token-per-minute limits for a minute after `acquired_at`.
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["configuration", "acquired_at"], name="llm_lease_config_acquired")
        ]

    def __str__(self) -> str:
        return f"{self.configuration_id} {self.token[:8]}"
