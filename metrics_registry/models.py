from django.db import models


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
