"""Freezing the counted rubric criteria when a release is published.

A run of a published release grades the criteria frozen here (`ReleaseRubricFreeze`), so a
consensus review after publication never changes that release's scores.
"""

from django.utils.translation import gettext as _

from ..models import ReleaseRubricFreeze, RubricCriterion, RubricItem


def release_rubric_freeze(*, release) -> list[str]:
    """Record the criteria counting now as the release's own (called as it is published).

    Answers with a warning for the maintainer when the frozen rubric is empty although rubric
    items exist: every rubric score of the release would read "not enough data" for good.
    """
    freeze, created = ReleaseRubricFreeze.objects.get_or_create(release=release)
    if created:
        freeze.criteria.set(RubricCriterion.objects.counting().values_list("pk", flat=True))
    if not freeze.criteria.exists() and RubricItem.objects.exists():
        return [
            _(
                "Release %(version)s froze no rubric criteria although rubric items exist "
                "(%(items)s): none of their criteria was validated by its source or had survived "
                'expert consensus when it was published, so its rubric scores will read "not '
                'enough data". Let criteria pass consensus, then publish a new release.'
            )
            % {"version": release.version, "items": RubricItem.objects.count()}
        ]
    return []


def release_counted_criteria(*, release_id: int | None):
    """The criteria a run of this release grades: frozen at publication, or (no release, or
    not yet published) those that count now."""
    freeze = (
        ReleaseRubricFreeze.objects.filter(release_id=release_id).first()
        if release_id is not None
        else None
    )
    if freeze is not None:
        return RubricCriterion.objects.filter(pk__in=freeze.criteria.values("pk"))
    return RubricCriterion.objects.counting()
