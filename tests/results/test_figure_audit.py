"""The audit of published intervals: it finds each defect it names, reads the figures the
``{% estimate %}`` tag marks on pages, and finds nothing on the demo's data."""

import io

import pytest
from django.core.management import call_command
from django.template import Context, Template

from evaluations.demo import DEMO_RUN_NAME
from evaluations.models import EvaluationRun
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from results.demo import demo_summaries_seed
from results.management.commands.audit_figures import local_fetch
from results.services.figure_audit import (
    OUT_OF_RANGE,
    POINT_OUTSIDE,
    TWO_INTERVALS,
    ZERO_WIDTH,
    audit_figures,
    figures_in_html,
    figures_in_json,
    site_audit,
)
from stats.estimates import Estimate
from tests.demo.test_demo_run import _seed_all


def _estimate(value, low, high, unit="proportion") -> dict:
    return Estimate(value=value, low=low, high=high, n=10, unit=unit).as_dict()


def test_each_defect_is_found_and_named():
    response = {
        "rates": [
            {"target": 1, "polarity": "all", "calibrated": _estimate(-0.11, 0.0, 0.186)},
            {"target": 2, "polarity": "all", "calibrated": _estimate(1.0, 1.0, 1.0)},
            {"target": 3, "polarity": "all", "calibrated": _estimate(0.5, 0.1, 0.4)},
            {"target": 4, "polarity": "all", "shift": _estimate(-0.2, -1.2, 0.1, "difference")},
            {"target": 5, "polarity": "all", "calibrated": Estimate.insufficient().as_dict()},
        ]
    }
    figures = figures_in_json(response, source="/api/x/", run=7)
    assert len(figures) == 5
    assert figures[0].kind == "rates.calibrated"
    assert figures[0].key == "run=7|calibrated rate:1:all"
    found = {(f.problem, f.figure.value) for f in audit_figures(figures)}
    assert found == {
        (OUT_OF_RANGE, -0.11),
        (POINT_OUTSIDE, -0.11),
        (ZERO_WIDTH, 1.0),
        (POINT_OUTSIDE, 0.5),
        (OUT_OF_RANGE, -0.2),
    }


def test_one_figure_with_two_intervals_is_found_across_responses_and_pages():
    one = {"target": 1, "polarity": "positive", "judge_only": _estimate(0.884, 0.832, 0.921)}
    other = {"target": 1, "polarity": "positive", "judge_only": _estimate(0.884, 0.838, 0.924)}
    same = {"target": 1, "polarity": "positive", "judge_only": _estimate(0.884, 0.832, 0.921)}
    # The run's published pass rate (its results endpoint) is the same figure by name.
    row = {"target": 1, "polarity": "positive", "level": "overall", "age_context": "all"}
    results = {"results": [{**row, "estimate": _estimate(0.884, 0.832, 0.921)}]}
    figures = [
        *figures_in_json(one, source="/a/", run=4),
        *figures_in_json(same, source="/b/", run=4),
        *figures_in_json(results, source="/api/runs/4/results/", run=4),
    ]
    assert len({f.key for f in figures}) == 1
    assert audit_figures(figures) == []
    figures += figures_in_json(other, source="/c/", run=4)
    (finding,) = audit_figures(figures)
    assert finding.problem == TWO_INTERVALS
    assert finding.figure.source == "/c/"


def test_the_estimate_tag_marks_its_figure_for_the_audit():
    template = Template(
        '{% load results_tags %}<p data-testid="rates">'
        '{% estimate a "pass rate" 3 "positive" "all" %}</p>'
        '<p data-testid="calibration">{% estimate b "pass rate" 3 "positive" "all" %}'
        "{% estimate c %}</p>"
    )
    page = template.render(
        Context(
            {
                "a": Estimate(value=0.884, low=0.832, high=0.921, n=20),
                "b": Estimate(value=0.884, low=0.838, high=0.924, n=20),
                "c": Estimate(value=0.5, low=0.5, high=0.5, n=6),
            }
        )
    )
    figures = figures_in_html(page, source="/results/methodology/?run=4", run=4)
    assert [(f.kind, f.value, f.low, f.high) for f in figures] == [
        ("page:pass rate", 0.884, 0.832, 0.921),
        ("page:pass rate", 0.884, 0.838, 0.924),
        ("page:calibration", 0.5, 0.5, 0.5),
    ]
    assert figures[0].key == figures[1].key == "run=4|pass rate:3:positive:all"
    assert {f.problem for f in audit_figures(figures)} == {TWO_INTERVALS, ZERO_WIDTH}


@pytest.fixture
def demo_run(monkeypatch, db):
    small = [m for m in DEMO_METRICS if m[2] == "positive"][:2] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:2]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()
    demo_summaries_seed()
    return EvaluationRun.objects.get(name=DEMO_RUN_NAME)


@pytest.mark.slow(reason="seeds the demo and reads every public page and API response")
@pytest.mark.embedded
def test_the_demo_publishes_no_defective_interval(demo_run):
    report = site_audit(local_fetch())
    assert report.unreadable == []
    assert report.pages >= 4 + 2 * len(demo_run.targets.all())
    assert report.with_interval > 100
    found = [f"{f.problem}: {f.figure.describe()} {f.detail}" for f in report.findings]
    assert found == []
    # The command reads the same and says what it read (the demo has an earlier public run
    # too: the command's --run reads the main one alone).
    one = site_audit(local_fetch(), run_id=demo_run.pk)
    assert one.figures < report.figures
    out = io.StringIO()
    call_command("audit_figures", f"--run={demo_run.pk}", stdout=out)
    assert f"{one.figures} figures" in out.getvalue()
