"""Demo rubric items: imported through the JSONL import like any benchmark's (`demo_rubric`)."""

import json

from core.seed_steps import SeedStep

from .demo_rubric import DEMO_RUBRIC_ITEMS
from .models import CriterionOrigin, RubricCriterion, RubricItem
from .services.imports import rubric_items_import

DEMO_RUBRIC_SOURCE = "ImpactBench demo (written for the demo)"


def _criterion(text: str, points: int, dimension: str) -> dict:
    return {"text": text, "points": points, "dimension": dimension}


def demo_rubric_items_seed() -> str:
    """Import the demo rubric items through the JSONL import; existing keys are kept."""
    lines = [
        json.dumps(
            {
                **{k: v for k, v in item.items() if k != "criteria"},
                "language": "en",
                "source": DEMO_RUBRIC_SOURCE,
                "criteria": [_criterion(*c) for c in item["criteria"]],
            },
            ensure_ascii=False,
        )
        for item in DEMO_RUBRIC_ITEMS
    ]
    report = rubric_items_import(data="\n".join(lines), dry_run=False)
    # The demo rubric stands in for an imported benchmark's, validated by its authors; its last
    # criterion is left awaiting consensus so the run page shows what gating leaves out.
    for key in report.created_keys:
        criteria = RubricCriterion.objects.filter(item__key=key).order_by("position")
        last = criteria.last()
        criteria.exclude(pk=last.pk if last else None).update(origin=CriterionOrigin.PUBLISHED)
    kept = len(report.duplicates)
    return f"Demo rubric items: {len(report.created_keys)} created, {kept} kept."


def demo_run_items() -> dict[str, list]:
    """The demo run's rubric items (answering `events.DEMO_RUN_ITEMS`)."""
    return {"rubric_items": list(RubricItem.objects.filter(source=DEMO_RUBRIC_SOURCE))}


def demo_seed_steps() -> list[SeedStep]:
    """This app's step of the demo seed: the rubric items seed even without evaluations."""
    return [SeedStep("rubric", "rubric items", demo_rubric_items_seed, order=40)]
