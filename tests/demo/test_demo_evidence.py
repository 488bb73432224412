"""A walk over the seeded demo run: every judge reading and rubric criterion, and whether its
evidence supports its verdict (`evaluations.evidence_support`).

The offline demo judge and grader are what produce this evidence; the walk asserts that none of
their readings is unsupported and no justification is cut off mid-sentence.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial

import pytest

from evaluations.demo import DEMO_RUN_NAME, demo_run_seed, demo_scenarios_seed
from evaluations.evidence_support import EvidenceStatus, GradeEvidence
from evaluations.models import EvaluationRun, Judgment, RubricGrade
from llm.demo import demo_configurations_seed
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from results.services.releases import RELEASE_FREEZES
from review.demo import demo_rubric_consensus_seed
from rubrics.demo import demo_rubric_items_seed

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's offline run"),
    pytest.mark.embedded,
]

# A justification that stops on an ellipsis, or without closing its sentence, was cut.
# Cut off: ends in an ellipsis or without a sentence's end. An ellipsis inside the text is the
# quoted reply's own (an assistant quoting the user shortly), not a cut.
_CUT = re.compile(r"(…|\.\.\.)\s*$|[^.!?\"”')]\s*$")


@dataclass
class EvidenceWalk:
    readings: Counter = field(default_factory=Counter)
    grades: Counter = field(default_factory=Counter)
    cut_justifications: list[str] = field(default_factory=list)
    reasked_readings: int = 0
    # A few quotes of each failing status, to show what the offline content needs to change.
    examples: dict[str, list[str]] = field(default_factory=dict)
    reasked_grades: int = 0

    @property
    def unsupported_readings(self) -> int:
        return sum(n for s, n in self.readings.items() if s != EvidenceStatus.SUPPORTED)

    @property
    def unsupported_grades(self) -> int:
        return self.grades[GradeEvidence.UNSUPPORTED]

    def report(self) -> str:
        return (
            f"judge readings {sum(self.readings.values())}: {dict(self.readings)} "
            f"({self.reasked_readings} asked again); "
            f"rubric criteria {sum(self.grades.values())}: {dict(self.grades)} "
            f"({self.reasked_grades} asked again); "
            f"justifications cut off: {len(self.cut_justifications)}; examples: {self.examples}"
        )

    def example(self, status: str, quote: str) -> None:
        shown = self.examples.setdefault(status, [])
        if len(shown) < 2 and quote not in shown:
            shown.append(quote)


def evidence_walk(run: EvaluationRun) -> EvidenceWalk:
    """Every judge reading and rubric criterion grade of `run`, counted by evidence status."""
    walk = EvidenceWalk()
    readings = Judgment.objects.filter(conversation__run=run)
    grades = RubricGrade.objects.filter(response__run=run)
    walk.reasked_readings = readings.filter(reasked_for_evidence=True).count()
    walk.reasked_grades = grades.filter(reasked_for_evidence=True).count()
    for status, justification, evidence in readings.values_list(
        "evidence_status", "justification", "evidence"
    ):
        walk.readings[status] += 1
        if status != EvidenceStatus.SUPPORTED:
            for item in evidence:
                walk.example(status, f"{item.get('shows')}: {item.get('quote')}")
        if _CUT.search(justification.strip()):
            walk.cut_justifications.append(justification)
    for status, justification, quote in grades.values_list(
        "evidence_status", "justification", "quote"
    ):
        walk.grades[status] += 1
        if status == GradeEvidence.UNSUPPORTED:
            walk.example("rubric unsupported", quote)
        if _CUT.search(justification.strip()):
            walk.cut_justifications.append(justification)
    return walk


def _seed_demo_subset(monkeypatch) -> EvaluationRun:
    # Four positive and four negative metrics: the offline judge's way of quoting is the same
    # for every metric, so a subset shows it in a fraction of the time.
    small = [m for m in DEMO_METRICS if m[2] == "positive"][:4] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:4]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    for step in (
        demo_configurations_seed,
        registry_demo.demo_registry_seed,
        demo_rubric_items_seed,
        # The panel's consensus lets the demo criteria count, and the release freezes them when
        # published, so the run grades them (the demo seed's own order).
        demo_rubric_consensus_seed,
        partial(registry_demo.demo_release_seed, freezes=RELEASE_FREEZES),
        demo_scenarios_seed,
        demo_run_seed,
    ):
        step()
    return EvaluationRun.objects.get(name=DEMO_RUN_NAME)


def test_the_evidence_walk_counts_every_status(monkeypatch):
    run = _seed_demo_subset(monkeypatch)
    walk = evidence_walk(run)
    print(walk.report())  # the walk's figures, read with `pytest -s`
    assert sum(walk.readings.values()) == Judgment.objects.filter(conversation__run=run).count()
    assert sum(walk.readings.values()) > 0
    assert EvidenceStatus.UNCHECKED not in walk.readings
    assert GradeEvidence.UNCHECKED not in walk.grades


def test_every_demo_reading_and_criterion_is_supported_by_its_evidence(monkeypatch):
    walk = evidence_walk(_seed_demo_subset(monkeypatch))
    assert walk.unsupported_readings == 0, walk.report()
    assert walk.unsupported_grades == 0, walk.report()
    assert walk.cut_justifications == [], (walk.report(), walk.cut_justifications[:3])
