"""Reads of the behaviour-dimension vocabulary (a table, seeded by a data migration)."""

from .models import RubricDimension


def dimension_choices() -> list[tuple[str, str]]:
    """(slug, name) of every dimension, in display order."""
    return list(RubricDimension.objects.values_list("slug", "name"))


def dimension_labels() -> dict[str, str]:
    return dict(dimension_choices())


def dimension_label(slug: str) -> str:
    """The name of a dimension; an unknown slug is shown as it is stored."""
    return dimension_labels().get(slug, slug)
