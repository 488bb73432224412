"""Rubric items written back out: HealthBench rows (simple-evals' oss_eval.jsonl shape) and an
Inspect AI dataset.

An item imported from HealthBench comes back as the row it was read from: the same prompt,
rubrics (criterion, points, tags) and every other field kept as metadata. An item written on
the platform gets the same shape: `axis:<dimension>` tags, and its acuity, population and
language as example tags, so simple-evals can grade it and break scores down by them. A country
(the item's or a criterion's) is written as a `country:` tag, which the import reads back.
"""

import json
from collections.abc import Iterable, Iterator

from django.db.models import Prefetch, QuerySet

from ..models import RubricCriterion, RubricItem

HEALTHBENCH_CONTENT_TYPE = "application/x-ndjson"


def rubric_items_for_export(*, keys: Iterable[str] | None = None) -> QuerySet[RubricItem]:
    items = RubricItem.objects.prefetch_related(
        Prefetch("criteria", queryset=RubricCriterion.objects.order_by("position"))
    ).order_by("key")
    return items.filter(key__in=list(keys)) if keys is not None else items


def _with_country(tags: list[str], country: str) -> list[str]:
    """The tags with the country's `country:` tag, once; unchanged without a country."""
    tag = f"country:{country}"
    return [*tags, tag] if country and tag not in tags else tags


def healthbench_row(item: RubricItem) -> dict:
    """One item as a HealthBench row; every criterion, dropped ones too (the file is the
    rubric as written, not as scored)."""
    native = item.source_format != "healthbench"
    rubrics = [
        {
            "criterion": criterion.text,
            "points": criterion.points,
            "tags": _with_country(
                list(criterion.tags) or ["level:example", f"axis:{criterion.dimension}"],
                criterion.country,
            ),
        }
        for criterion in item.criteria.all()
    ]
    metadata = dict(item.metadata or {})
    example_tags = metadata.pop("example_tags", None)
    if example_tags is None:
        example_tags = [f"language:{item.language}"] if native else []
        if item.acuity:
            example_tags.insert(0, f"acuity:{item.acuity}")
        if item.population:
            example_tags.insert(0, f"population:{item.population}")
    example_tags = _with_country(list(example_tags), item.country)
    row = {
        "prompt": item.messages,
        "rubrics": rubrics,
        "example_tags": example_tags,
        "ideal_completions_data": metadata.pop("ideal_completions_data", None),
        "prompt_id": item.external_id or item.key,
    }
    row.update(metadata)  # fields this platform does not know, kept from the source row
    return row


def healthbench_jsonl(items: Iterable[RubricItem]) -> Iterator[str]:
    """The lines of a HealthBench JSONL file, each ending in a newline."""
    for item in items:
        yield json.dumps(healthbench_row(item), ensure_ascii=False) + "\n"


def inspect_rubric_sample(item: RubricItem) -> dict:
    """A rubric item: the conversation as input, its criteria (HealthBench's grading) as data."""
    return {
        "id": item.key,
        "input": item.messages,
        "target": "",
        "metadata": {
            "kind": "rubric_item",
            "acuity": item.acuity,
            "population": item.population,
            "language": item.language,
            "country": item.country,
            "source": item.source,
            "criteria": [
                {
                    "criterion": c.text,
                    "points": c.points,
                    "dimension": c.dimension,
                    "tags": list(c.tags),
                    "country": c.country,
                    "source_validated": c.source_validated,
                    "consensus": c.consensus_state,
                }
                for c in item.criteria.all()
            ],
        },
    }


def rubric_inspect_lines() -> Iterator[str]:
    """JSONL: one sample per rubric item (a separate dataset: its grading is per criterion)."""
    for item in rubric_items_for_export():
        yield json.dumps(inspect_rubric_sample(item), ensure_ascii=False) + "\n"
