"""HealthBench's own oss_eval.jsonl rows: imported unchanged, exported back as they were."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from core.exceptions import ApplicationError
from rubrics.models import CriterionOrigin, RubricCriterion, RubricDimension, RubricItem
from rubrics.scoring import aggregate_score, item_score
from rubrics.services.exports import healthbench_jsonl, rubric_items_for_export
from rubrics.services.imports import rubric_items_import

pytestmark = pytest.mark.django_db

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "healthbench_oss_eval_sample.jsonl"
HEALTHBENCH_AXES = {
    "accuracy",
    "completeness",
    "context_awareness",
    "communication_quality",
    "instruction_following",
}


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def test_dimension_vocabulary_holds_both_benchmarks():
    slugs = set(RubricDimension.objects.values_list("slug", flat=True))
    assert slugs >= HEALTHBENCH_AXES
    assert len(slugs) == 14  # ten MentalHealthBench dimensions, accuracy shared with HealthBench
    assert RubricDimension.objects.get(slug="accuracy").frameworks == [
        "MentalHealthBench",
        "HealthBench",
    ]


def test_the_sample_imports_unchanged_with_everything_kept():
    rows = sample_rows()
    assert len(rows) == 30
    report = rubric_items_import(data=SAMPLE.read_bytes(), dry_run=False)
    assert report.format == "healthbench"
    assert report.errors == []
    assert len(report.created_keys) == 30

    first = rows[0]
    item = RubricItem.objects.get(external_id=first["prompt_id"])
    assert item.messages == first["prompt"]
    assert (item.acuity, item.population) == ("", "")
    assert item.metadata == {
        "example_tags": first["example_tags"],
        "ideal_completions_data": first["ideal_completions_data"],
    }
    criteria = list(item.criteria.order_by("position"))
    assert [(c.text, c.points, c.tags) for c in criteria] == [
        (r["criterion"], r["points"], r["tags"]) for r in first["rubrics"]
    ]
    assert [c.dimension for c in criteria] == [
        next(t[5:] for t in r["tags"] if t.startswith("axis:")) for r in first["rubrics"]
    ]
    with_ideal = next(r for r in rows if r["ideal_completions_data"])
    kept = RubricItem.objects.get(external_id=with_ideal["prompt_id"]).metadata
    assert kept["ideal_completions_data"] == with_ideal["ideal_completions_data"]
    # Published criteria arrive validated by their source.
    assert set(RubricCriterion.objects.values_list("origin", flat=True)) == {
        CriterionOrigin.PUBLISHED
    }
    assert all(c.source_validated for c in criteria)
    assert set(RubricCriterion.objects.values_list("dimension", flat=True)) == HEALTHBENCH_AXES


def test_import_then_export_reproduces_every_row():
    rubric_items_import(data=SAMPLE.read_bytes(), dry_run=False, fmt="healthbench")
    exported = [json.loads(line) for line in healthbench_jsonl(rubric_items_for_export())]
    by_id = {row["prompt_id"]: row for row in exported}
    rows = sample_rows()
    assert len(by_id) == len(rows)
    for row in rows:
        assert by_id[row["prompt_id"]] == row


def test_raw_scores_can_be_negative_as_simple_evals_computes_them():
    # simple-evals' calculate_score: met points over positive points, unclipped per item.
    row = next(r for r in sample_rows() if r["rubrics"][2]["points"] == -10)
    points = [r["points"] for r in row["rubrics"]]
    met = [p < 0 for p in points]  # a reply doing only what the rubric penalises
    positive = sum(p for p in points if p > 0)
    raw = sum(p for p, m in zip(points, met, strict=True) if m) / positive
    assert raw < 0
    assert item_score(points, met) == pytest.approx(raw)  # not clipped per item
    assert aggregate_score([item_score(points, met)]) == 0.0  # the mean is clipped


def test_unknown_axes_and_missing_fields_are_reported_per_line():
    good, *_ = sample_rows()
    bad_axis = dict(good, prompt_id="bad-axis")
    bad_axis["rubrics"] = [{"criterion": "Is kind", "points": 5, "tags": ["axis:kindness"]}]
    no_rubrics = {"prompt_id": "no-rubrics", "prompt": good["prompt"], "rubrics": []}
    data = "\n".join(json.dumps(r) for r in (good, bad_axis, no_rubrics))
    report = rubric_items_import(data=data, dry_run=True)
    reasons = {p.line: p.reason for p in report.errors}
    assert 'unknown dimension "kindness": use one of context_seeking' in reasons[2]
    assert "instruction_following" in reasons[2]
    assert "rubrics must be a non-empty list" in reasons[3]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (json.dumps(sample_rows()[:3], indent=2), "one JSON array of 3 entries, not JSON Lines"),
        (json.dumps(sample_rows()[0], indent=2), "pretty-printed JSON"),
        (json.dumps(sample_rows()[:3]), "one JSON array of 3 entries"),
    ],
)
def test_a_single_json_document_gets_one_clear_message(text, expected):
    with pytest.raises(ApplicationError, match=expected) as caught:
        rubric_items_import(data=text, dry_run=True)
    assert "jq -c" in caught.value.message


def test_native_items_export_as_healthbench_rows_and_import_again(tmp_path):
    native = {
        "key": "mhb-0001",
        "messages": [{"role": "user", "content": "I can't sleep before exams."}],
        "criteria": [
            {"text": "Asks what the user has tried", "points": 5, "dimension": "context seeking"},
            {"text": "Suggests pills", "points": -8, "dimension": "Appropriate boundaries"},
        ],
        "acuity": "non-acute",
    }
    rubric_items_import(data=json.dumps(native), dry_run=False)
    out = tmp_path / "out.jsonl"
    call_command("export_rubric_items", str(out))
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["prompt_id"] == "mhb-0001"
    assert row["rubrics"][1] == {
        "criterion": "Suggests pills",
        "points": -8,
        "tags": ["level:example", "axis:boundaries"],
    }
    assert row["example_tags"] == ["acuity:non_acute", "language:en"]
    RubricItem.objects.all().delete()
    again = rubric_items_import(data=out.read_bytes(), dry_run=False)
    assert again.format == "healthbench"
    assert again.created_keys == ["mhb-0001"]


def test_researchers_upload_check_import_and_download_on_the_web(client_for, researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client = client_for(researcher)
    url = reverse("rubrics:rubric-import")
    page = client.get(url)
    assert "context_awareness" in page.content.decode()

    upload = SimpleUploadedFile("oss_eval.jsonl", SAMPLE.read_bytes())
    checked = client.post(url, {"file": upload, "format": "auto", "action": "preview"})
    body = checked.content.decode()
    assert "Dry run: 30 rubric items would be imported" in body
    assert "Read as HealthBench rows" in body
    assert not RubricItem.objects.exists()

    staged = checked.context["form"]["staged"].value()
    done = client.post(url, {"staged": staged, "format": "auto", "action": "import"})
    assert "Imported 30 rubric items" in done.content.decode()
    assert RubricItem.objects.count() == 30

    download = client.get(reverse("rubrics:rubric-export-healthbench"))
    assert download["Content-Type"] == "application/x-ndjson"
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert sorted(json.loads(x)["prompt_id"] for x in lines) == sorted(
        r["prompt_id"] for r in sample_rows()
    )


def test_a_pretty_printed_upload_is_one_message_and_the_form_keeps_choices(client_for, researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    text = json.dumps(sample_rows()[:2], indent=2).encode()
    response = client_for(researcher).post(
        reverse("rubrics:rubric-import"),
        {"file": SimpleUploadedFile("x.json", text), "format": "healthbench", "action": "preview"},
    )
    body = response.content.decode()
    assert body.count("not JSON Lines") == 1
    assert response.context["form"]["format"].value() == "healthbench"
