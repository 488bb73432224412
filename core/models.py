from django.db import models


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class WorkerPing(models.Model):
    """Written by a Celery worker on request: proof that background work really runs."""

    token = models.CharField(max_length=64, unique=True)
    requested_at = models.DateTimeField()
    answered_at = models.DateTimeField()
    worker_hostname = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-answered_at"]

    def __str__(self) -> str:
        return f"ping {self.token} by {self.worker_hostname or 'worker'}"
