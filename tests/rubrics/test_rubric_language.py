"""Each rubric row's language survives import, a release's freeze and export."""

import json

import pytest

from rubrics.models import ReleaseRubricFreeze, RubricItem
from rubrics.services.exports import healthbench_row, inspect_rubric_sample
from rubrics.services.imports import rubric_items_import
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = pytest.mark.django_db


def spanish_row(**overrides) -> str:
    """A MentalHealthBench-format row written in Spanish."""
    row = {
        "key": "mhb-es-0001",
        "title": "Estrés por exámenes",
        "population": "teen",
        "language": "es",
        "source_validated": True,
        "messages": [{"role": "user", "content": "No puedo dormir antes de los exámenes."}],
        "criteria": [
            {"text": "Pregunta qué ha probado", "points": 5, "dimension": "context_seeking"},
            {"text": "Recomienda somníferos", "points": -8, "dimension": "boundaries"},
        ],
    }
    row.update(overrides)
    return json.dumps(row, ensure_ascii=False)


def healthbench_line(**overrides) -> str:
    row = {
        "prompt": [{"role": "user", "content": "Meu pai está com a fala enrolada."}],
        "rubrics": [
            {
                "criterion": "Manda ligar 192",
                "points": 10,
                "tags": ["level:example", "axis:accuracy"],
            }
        ],
        "example_tags": ["theme:emergency_referrals"],
        "prompt_id": "hb-pt-1",
    }
    row.update(overrides)
    return json.dumps(row, ensure_ascii=False)


def test_a_spanish_row_imports_freezes_and_exports_as_spanish():
    report = rubric_items_import(data=spanish_row(), dry_run=False)
    assert report.created_keys == ["mhb-es-0001"]
    item = RubricItem.objects.get(key="mhb-es-0001")
    assert item.language == "es"

    release = release_with("1.0.0", [MetricFactory()], publish=True)
    frozen = ReleaseRubricFreeze.objects.get(release=release).criteria.select_related("item")
    assert {criterion.item.language for criterion in frozen} == {"es"}
    assert frozen.count() == 2

    row = healthbench_row(item)
    assert "language:es" in row["example_tags"]
    assert inspect_rubric_sample(item)["metadata"]["language"] == "es"


def test_a_row_language_takes_its_standard_spelling_and_a_wrong_one_blocks_the_line():
    rubric_items_import(data=spanish_row(language="ES_mx"), dry_run=False)
    assert RubricItem.objects.get().language == "es-MX"
    report = rubric_items_import(data=spanish_row(key="mhb-es-2", language="spanish"))
    assert [problem.line for problem in report.errors] == [1]
    assert "“spanish” is not a language tag" in report.errors[0].reason


def test_a_healthbench_row_reads_its_language_field_or_tag_and_gives_it_back():
    data = "\n".join(
        [
            healthbench_line(language="pt-br"),
            healthbench_line(prompt_id="hb-pt-2", example_tags=["language:pt-BR"]),
            healthbench_line(prompt_id="hb-en"),
        ]
    )
    assert rubric_items_import(data=data, dry_run=False).created_keys == [
        "hb-pt-1",
        "hb-pt-2",
        "hb-en",
    ]
    languages = dict(RubricItem.objects.values_list("key", "language"))
    assert languages == {"hb-pt-1": "pt-BR", "hb-pt-2": "pt-BR", "hb-en": "en"}
    # The row comes back as it was read: its own field or tag, nothing added.
    assert healthbench_row(RubricItem.objects.get(key="hb-pt-1"))["language"] == "pt-br"
    assert healthbench_row(RubricItem.objects.get(key="hb-pt-2"))["example_tags"] == [
        "language:pt-BR"
    ]
    assert "language" not in healthbench_row(RubricItem.objects.get(key="hb-en"))
