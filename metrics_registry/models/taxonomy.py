"""The taxonomy metrics are placed in: areas and their subareas, the AI Nutrition Label's
categories, the benchmarks items were taken from, and the counters behind public keys."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Area(models.Model):
    """One of the three domains of human outcomes. Slugs are stable identifiers used in URLs."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class Subarea(models.Model):
    """One of the fourteen subareas; each belongs to exactly one area."""

    area = models.ForeignKey(Area, on_delete=models.PROTECT, related_name="subareas")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["area__position", "position", "name"]

    def __str__(self) -> str:
        return self.name


class Polarity(models.TextChoices):
    POSITIVE = "positive", _("Positive (behaviour to promote)")
    NEGATIVE = "negative", _("Negative (behaviour to avoid)")


class LabelCategory(models.Model):
    """A line of the AI Nutrition Label: a harm avoided or a benefit promoted.

    Rows come from a data migration; slugs are stable because labels and exports refer to them.
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100, unique=True)
    polarity = models.CharField(max_length=8, choices=Polarity.choices)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["polarity", "position", "name"]
        verbose_name_plural = "label categories"

    def __str__(self) -> str:
        return self.name


class Benchmark(models.Model):
    """An existing benchmark or harm taxonomy whose items were standardised into metrics."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    citation = models.TextField(blank=True)
    url = models.URLField(blank=True)
    description = models.TextField(blank=True)
    license = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class KeyCounter(models.Model):
    """Monotonic counters for public identifiers; a deleted metric never frees its key."""

    name = models.CharField(max_length=32, unique=True)
    last_value = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name}={self.last_value}"
