"""The platform's own rubric item line (the MentalHealthBench form).

    {"key": "mhb-0001", "title": "Exam stress", "acuity": "non_acute", "population": "teen",
     "language": "en", "country": "US", "source": "MentalHealthBench sample",
     "messages": [{"role": "user", "content": "…"}, …],
     "criteria": [{"text": "Asks what the user has tried", "points": 5,
                   "dimension": "context_seeking", "tags": ["theme:sleep"]}, …]}

Acuity, population and country (ISO 3166-1 alpha-2, where the user is) are optional; a
criterion may name its own country (`"country": "ES"`), else it is graded as the item's.
`"source_validated": true` marks the criteria as taken from a published benchmark (they count
without platform consensus); `metadata` is kept as is.
"""

from typing import Any

from django.utils.text import slugify
from django.utils.translation import gettext as _

from core.validators import text_length_problem

from ...models import CriterionOrigin
from .rows import (
    ACUITY,
    POPULATION,
    DimensionVocabulary,
    RubricCriterionCandidate,
    RubricItemCandidate,
    messages_validate,
    optional_choice,
    points_validate,
    positive_points_check,
    row_country,
    row_language,
    text,
)


def _criteria_validate(
    raw: Any, reasons: list[str], vocabulary: DimensionVocabulary
) -> list[RubricCriterionCandidate]:
    if not isinstance(raw, list) or not raw:
        reasons.append(_("criteria must be a non-empty list"))
        return []
    criteria = []
    for position, criterion in enumerate(raw, start=1):
        if not isinstance(criterion, dict):
            reasons.append(_("criterion %(position)s is not an object") % {"position": position})
            continue
        wording = text(criterion.get("text"))
        if not wording:
            reasons.append(_("criterion %(position)s has no text") % {"position": position})
        if problem := text_length_problem(
            wording, what=_("criterion %(position)s") % {"position": position}
        ):
            reasons.append(problem)
        points = points_validate(position, criterion.get("points"), reasons)
        raw_dimension = text(criterion.get("dimension"))
        dimension = vocabulary.get(raw_dimension)
        if dimension is None:
            reasons.append(vocabulary.unknown(position, raw_dimension))
        tags = criterion.get("tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            reasons.append(
                _("criterion %(position)s tags must be a list of text") % {"position": position}
            )
            tags = []
        country = row_country(
            criterion.get("country"),
            reasons,
            what=_("criterion %(position)s") % {"position": position},
        )
        if wording and points is not None and dimension:
            criteria.append(
                RubricCriterionCandidate(wording, points, dimension, tuple(tags), country)
            )
    positive_points_check(criteria, reasons)
    return criteria


def native_line_validate(
    line: int, data: dict, vocabulary: DimensionVocabulary
) -> RubricItemCandidate | str:
    reasons: list[str] = []
    key = slugify(text(data.get("key")))[:100]
    if not key:
        reasons.append(_("missing key (a stable identifier such as mhb-0001)"))
    messages = messages_validate(data.get("messages"), reasons)
    criteria = _criteria_validate(data.get("criteria"), reasons, vocabulary)
    acuity = optional_choice(data, "acuity", ACUITY, "non_acute, high_acuity or emergency", reasons)
    population = optional_choice(
        data, "population", POPULATION, "adult, teen, caregiver or clinician", reasons
    )
    language = row_language(data.get("language"), reasons)
    country = row_country(data.get("country"), reasons)
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        reasons.append(_("metadata must be a JSON object"))
    if reasons:
        return "; ".join(reasons)
    return RubricItemCandidate(
        line=line,
        key=key,
        title=text(data.get("title"))[:200],
        messages=messages,
        acuity=acuity,
        population=population,
        language=language,
        country=country,
        source=text(data.get("source"))[:200],
        criteria=tuple(criteria),
        origin=(
            CriterionOrigin.PUBLISHED
            if data.get("source_validated") is True
            else CriterionOrigin.PLATFORM
        ),
        metadata=metadata,
    )
