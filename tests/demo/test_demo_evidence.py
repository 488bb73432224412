"""A walk over the seeded demo run: every judge reading and rubric criterion, and whether its
evidence supports its verdict (`evaluations.evidence_support`).

The offline demo judge and grader are what produce this evidence; the walk asserts that none of
their readings is unsupported and no justification is cut off mid-sentence. Until the offline
content quotes evidence that supports its verdicts the walk is expected to fail (strict, so it
reports when it starts passing and the mark must go).
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
_CUT = re.compile(r"…|\.\.\.|[^.!?\"”')]\s*$")


@dataclass
class EvidenceWalk:
    readings: Counter = field(default_factory=Counter)
    grades: Counter = field(default_factory=Counter)
    cut_justifications: list[str] = field(default_factory=list)

    @property
    def unsupported_readings(self) -> int:
        return sum(n for s, n in self.readings.items() if s != EvidenceStatus.SUPPORTED)

    @property
    def unsupported_grades(self) -> int:
        return self.grades[GradeEvidence.UNSUPPORTED]

    def report(self) -> str:
        return (
            f"judge readings {sum(self.readings.values())}: {dict(self.readings)}; "
            f"rubric criteria {sum(self.grades.values())}: {dict(self.grades)}; "
            f"justifications cut off: {len(self.cut_justifications)}"
        )


def evidence_walk(run: EvaluationRun) -> EvidenceWalk:
    """Every judge reading and rubric criterion grade of `run`, counted by evidence status."""
    walk = EvidenceWalk()
    for status, justification in Judgment.objects.filter(conversation__run=run).values_list(
        "evidence_status", "justification"
    ):
        walk.readings[status] += 1
        if _CUT.search(justification.strip()):
            walk.cut_justifications.append(justification)
    for status, justification in RubricGrade.objects.filter(response__run=run).values_list(
        "evidence_status", "justification"
    ):
        walk.grades[status] += 1
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


@pytest.mark.xfail(
    strict=True,
    reason="the offline demo judge and grader do not yet quote evidence that supports every "
    "verdict, and cut their justifications; passes once the offline content is rewritten",
)
def test_every_demo_reading_and_criterion_is_supported_by_its_evidence(monkeypatch):
    walk = evidence_walk(_seed_demo_subset(monkeypatch))
    assert walk.unsupported_readings == 0, walk.report()
    assert walk.unsupported_grades == 0, walk.report()
    assert walk.cut_justifications == [], walk.report()
