"""HealthBench's own row (simple-evals' oss_eval.jsonl), read unchanged.

    {"prompt": [{"role": "user", "content": "…"}, …],
     "rubrics": [{"criterion": "Advises calling emergency services", "points": 10,
                  "tags": ["level:example", "axis:accuracy"]}, …],
     "example_tags": ["theme:emergency_referrals", "physician_agreed_category:…"],
     "ideal_completions_data": null | {"ideal_completion": "…", …},
     "prompt_id": "…"}

prompt_id becomes the key (and is kept verbatim), prompt the messages, each rubric a criterion
whose dimension is its `axis:` tag, with all its tags kept. Every other field of the row
(example_tags, ideal_completions_data, anything newer) is kept as the item's metadata, so an
export gives the row back. HealthBench's criteria are physician-written and validated by
their source; acuity and population are left blank (HealthBench has no such fields). A row's
language is its `language` field or `language:` example tag, else English; its country (and a
rubric's) is its `country` field or `country:` tag, else none.
"""

from typing import Any

from django.utils.text import slugify
from django.utils.translation import gettext as _

from ...models import CriterionOrigin
from .rows import (
    DimensionVocabulary,
    RubricCriterionCandidate,
    RubricItemCandidate,
    messages_validate,
    points_validate,
    positive_points_check,
    row_country,
    row_language,
    tagged,
)

FORMAT = "healthbench"
SOURCE = "HealthBench"
CORE_FIELDS = ("prompt", "rubrics", "prompt_id")
AXIS_PREFIX = "axis:"
THEME_PREFIX = "theme:"
LANGUAGE_PREFIX = "language:"
COUNTRY_PREFIX = "country:"


def looks_like_healthbench(row: Any) -> bool:
    return isinstance(row, dict) and "prompt_id" in row and "rubrics" in row


def _rubrics_validate(
    raw: Any, reasons: list[str], vocabulary: DimensionVocabulary
) -> list[RubricCriterionCandidate]:
    if not isinstance(raw, list) or not raw:
        reasons.append(_("rubrics must be a non-empty list of {criterion, points, tags}"))
        return []
    criteria = []
    for position, rubric in enumerate(raw, start=1):
        if not isinstance(rubric, dict):
            reasons.append(_("rubric %(position)s is not an object") % {"position": position})
            continue
        wording = rubric.get("criterion")
        if not isinstance(wording, str) or not wording.strip():
            reasons.append(_("rubric %(position)s has no criterion text") % {"position": position})
            wording = ""
        points = points_validate(position, rubric.get("points"), reasons)
        tags = rubric.get("tags")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            reasons.append(
                _("rubric %(position)s tags must be a list of text") % {"position": position}
            )
            tags = []
        axes = [t[len(AXIS_PREFIX) :] for t in tags if t.startswith(AXIS_PREFIX)]
        dimension = vocabulary.get(axes[0]) if axes else None
        if not axes:
            reasons.append(
                _('rubric %(position)s has no "axis:" tag to take its dimension from')
                % {"position": position}
            )
        elif dimension is None:
            reasons.append(vocabulary.unknown(position, axes[0]))
        # A criterion's country: its own field, else its `country:` tag (the export's).
        country = row_country(
            rubric.get("country") or tagged(tags, COUNTRY_PREFIX),
            reasons,
            what=_("rubric %(position)s") % {"position": position},
        )
        if wording and points is not None and dimension:
            criteria.append(
                RubricCriterionCandidate(wording, points, dimension, tuple(tags), country)
            )
    positive_points_check(criteria, reasons)
    return criteria


def _title(example_tags: Any) -> str:
    themes = [
        t[len(THEME_PREFIX) :].replace("_", " ")
        for t in example_tags or []
        if isinstance(t, str) and t.startswith(THEME_PREFIX)
    ]
    return f"HealthBench: {', '.join(themes)}" if themes else "HealthBench"


def _language(data: dict, example_tags: Any, reasons: list[str]) -> str:
    """The row's own `language` field, else its `language:` example tag (the tag this
    platform's export writes), else English, as HealthBench's own rows are."""
    raw = data.get("language")
    if not raw and isinstance(example_tags, list):
        raw = next(
            (
                t[len(LANGUAGE_PREFIX) :]
                for t in example_tags
                if isinstance(t, str) and t.startswith(LANGUAGE_PREFIX)
            ),
            None,
        )
    return row_language(raw, reasons)


def healthbench_line_validate(
    line: int, data: dict, vocabulary: DimensionVocabulary
) -> RubricItemCandidate | str:
    reasons: list[str] = []
    prompt_id = data.get("prompt_id")
    if not isinstance(prompt_id, str) or not slugify(prompt_id):
        reasons.append(_("prompt_id must be a non-empty text identifier"))
        prompt_id = ""
    messages = messages_validate(data.get("prompt"), reasons, allow_system=True)
    criteria = _rubrics_validate(data.get("rubrics"), reasons, vocabulary)
    example_tags = data.get("example_tags", [])
    if not isinstance(example_tags, list):
        reasons.append(_("example_tags must be a list of text"))
    language = _language(data, example_tags, reasons)
    country = row_country(data.get("country") or tagged(example_tags, COUNTRY_PREFIX), reasons)
    if reasons:
        return "; ".join(reasons)
    return RubricItemCandidate(
        line=line,
        key=slugify(prompt_id)[:100],
        title=_title(example_tags)[:200],
        messages=messages,
        acuity="",
        population="",
        language=language,
        country=country,
        source=SOURCE,
        criteria=tuple(criteria),
        origin=CriterionOrigin.PUBLISHED,
        source_format=FORMAT,
        external_id=prompt_id,
        metadata={k: v for k, v in data.items() if k not in CORE_FIELDS},
    )
