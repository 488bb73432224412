"""The label leads down to the evidence: grade rows link to the category's metrics, a
teen / adult switch changes every figure, and a grade whose interval spans bands says so."""

import pytest
from django.urls import reverse

from evaluations.models import Conversation
from results.label import CategoryLine, grade_for, label_profile
from results.models import PassRateSummary
from stats.estimates import Estimate
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def test_a_grade_shows_its_range_when_the_interval_spans_bands():
    line = CategoryLine(None, Estimate(value=0.77, low=0.71, high=0.86, n=40), "B", False, 2)
    assert line.grade_range == ("B−", "A−")
    assert line.grade_text == "B, plausibly B− to A−"
    narrow = CategoryLine(None, Estimate(value=0.77, low=0.76, high=0.79, n=400), "B", False, 2)
    assert narrow.grade_range is None
    assert narrow.grade_text == "B"


def test_teen_label_counts_only_teen_conversations(client):
    run = published_run(n_metrics=2)
    target = run.targets.order_by("name").first()
    teen = label_profile(run=run, target=target, age="teen")
    judged = Conversation.objects.filter(run=run, target=target, verdict_passed__isnull=False)
    teen_convs = judged.filter(scenario__age_context="teen")
    assert teen.n_conversations == teen_convs.count()
    assert teen.adult == 0
    for line in teen.lines:
        in_cat = teen_convs.filter(scenario__metric_version__label_category=line.category)
        assert line.estimate.n == in_cat.count()
        assert line.estimate.value == pytest.approx(
            in_cat.filter(verdict_passed=True).count() / in_cat.count()
        )
        assert line.grade == grade_for(line.estimate.value)
    html = client.get(reverse("results:label", args=[target.pk]), {"age": "teen"}).content
    html = html.decode()
    assert "Shown for teen personas (13–17) only." in html
    assert "age=teen&amp;download=1" in html
    svg = client.get(reverse("results:label-svg", args=[target.pk]), {"age": "teen"})
    assert "shown for teen personas (13–17) only" in svg.content.decode()


def test_each_grade_links_to_its_category_page_with_per_metric_rates(client):
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:label", args=[target.pk])).content.decode()
    profile = label_profile(run=run, target=target)
    for line in profile.lines:
        url = reverse("results:label-category", args=[target.pk, line.category.slug])
        assert f'href="{url}?run={run.pk}"' in html
        page = client.get(url, {"run": run.pk})
        assert page.status_code == 200
        body = page.content.decode()
        rows = PassRateSummary.objects.filter(
            run=run, target=target, level="metric", age_context="all",
            metric_version__label_category=line.category,
        )  # fmt: skip
        assert rows.count() == line.n_metrics
        for row in rows:
            key = row.metric_version.metric.key
            assert f"{reverse('results:metric', args=[key])}?run={run.pk}#scenarios" in body
            assert f"n = {row.n_conversations}" in body or f"n={row.n_conversations}" in body
    missing = client.get(reverse("results:label-category", args=[target.pk, "no-such-category"]))
    assert missing.status_code == 404


def test_overview_lists_every_models_grades_alphabetically(client):
    run = published_run(n_metrics=4, names=("Zeta offline", "Alpha offline"))
    html = client.get(reverse("results:label-overview")).content.decode()
    targets = list(run.targets.order_by("name"))
    positions = [html.index(f">{t.name}</a>") for t in targets]
    assert positions == sorted(positions)
    for t in targets:
        for line in label_profile(run=run, target=t).lines:
            url = reverse("results:label-category", args=[t.pk, line.category.slug])
            cell = html[html.index(f"{url}?run={run.pk}") :]
            assert cell.split('<span class="ib-grade">', 1)[1].startswith(line.grade)
    assert "overall" not in html.split('data-testid="label-overview"')[1].split("</table>")[0]


def test_label_shows_the_models_grades_in_each_release_it_was_tested_in(client):
    from evaluations.models import EvaluationRun, Scenario
    from results.services import results_refresh
    from tests.results.factories import completed_run

    first = published_run(n_metrics=2, version="1.0.0")
    target = first.targets.order_by("name").first()
    version = Conversation.objects.filter(run=first).first().scenario.metric_version
    outcomes = [
        (s, target, s.base_index != 0) for s in Scenario.objects.filter(metric_version=version)
    ]
    second = completed_run(
        targets=[target], versions=[version], outcomes=outcomes, publish_as="2.0.0"
    )
    results_refresh(run=second, n_resamples=50)
    html = client.get(reverse("results:label", args=[target.pk]), {"run": second.pk}).content
    html = html.decode()
    assert 'data-testid="label-history"' in html
    history = html.split('data-testid="label-history"')[1].split("</section>")[0]
    assert history.index("Release 1.0.0") < history.index("Release 2.0.0")
    for run in (first, second):
        profile = label_profile(run=EvaluationRun.objects.get(pk=run.pk), target=target)
        line = next(li for li in profile.lines if li.category.slug == version.label_category.slug)
        assert f"<strong>{line.grade_text}</strong>" in history
    # The change since 1.0.0, paired on the base scenarios both runs used.
    from results.services.history_change import change_text, paired_change

    assert f"Change since {first.name} (release 1.0.0)" in history

    def counts(run):
        found = {}
        for c in Conversation.objects.filter(
            run=run,
            target=target,
            verdict_passed__isnull=False,
            scenario__metric_version__label_category=version.label_category,
        ).select_related("scenario"):
            key = (c.scenario.metric_version_id, c.scenario.base_index)
            passed, n = found.get(key, (0, 0))
            found[key] = (passed + int(c.verdict_passed), n + 1)
        return found

    change = paired_change(counts(second), counts(first))
    assert change["paired"]
    assert change_text(change) in history


def test_label_history_follows_the_model_line_across_versions_and_releases(client):
    """Two configurations naming one model line are two versions of one product: the newer
    version's label shows the older one's grades and the change between them, paired on the
    base scenarios both used; a configuration of no line never borrows another's history."""
    from evaluations.models import Scenario
    from results.services import results_refresh
    from results.services.history_change import change_text, paired_change, run_cluster_counts
    from tests.llm.factories import OfflineConfigurationFactory
    from tests.results.factories import completed_run

    first = published_run(n_metrics=2, version="1.0.0")
    old = first.targets.order_by("name").first()
    old.model_line = "Acme Chat"
    old.save(update_fields=["model_line"])
    other = first.targets.exclude(pk=old.pk).get()  # no line: a model of its own
    new = OfflineConfigurationFactory(name="Acme Chat v2", model_line="Acme Chat")
    version = Conversation.objects.filter(run=first).first().scenario.metric_version
    scenarios = Scenario.objects.filter(metric_version=version)
    second = completed_run(
        targets=[new, other],
        versions=[version],
        outcomes=[(s, t, True) for s in scenarios for t in (new, other)],
        publish_as="2.0.0",
    )
    results_refresh(run=second, n_resamples=50)

    html = client.get(reverse("results:label", args=[new.pk]), {"run": second.pk}).content
    history = html.decode().split('data-testid="label-history"')[1].split("</section>")[0]
    assert "How Acme Chat changed across versions and releases" in history
    header = history.split("<thead>")[1].split("</thead>")[0]
    assert header.index(old.name) < header.index("Acme Chat v2")
    assert header.index("Release 1.0.0") < header.index("Release 2.0.0")
    assert f"Change since {old.name}, {first.name} (release 1.0.0)" in history
    category = version.label_category
    change = paired_change(
        run_cluster_counts(run_id=second.pk, target_id=new.pk, category_id=category.pk),
        run_cluster_counts(run_id=first.pk, target_id=old.pk, category_id=category.pk),
    )
    assert change["paired"]
    assert change["estimate"]["value"] > 0  # v2 passed everything
    assert change_text(change) in history
    # The old version's own label, reached without a run, shows the same line's history.
    html = client.get(reverse("results:label", args=[old.pk]), {"run": first.pk}).content
    assert 'data-testid="label-history"' in html.decode()
    # A model of no line has a history of its own runs only: both runs here, itself alone.
    html = client.get(reverse("results:label", args=[other.pk]), {"run": second.pk}).content
    history = html.decode().split('data-testid="label-history"')[1].split("</section>")[0]
    assert "Acme Chat" not in history
    assert "across releases" in history
    assert "versions and" not in history


def test_two_runs_of_one_release_read_oldest_first_with_the_newer_minus_the_older(client):
    """Two official runs of one release: columns named by run, in the order they were made
    (not headline first), the change the newer run's rate minus the older's, and a heading
    that speaks of runs, not releases."""
    from datetime import timedelta

    from evaluations.models import Scenario
    from results.services import results_refresh
    from results.services.history_change import change_text, paired_change, run_cluster_counts
    from tests.results.factories import completed_run

    first = published_run(n_metrics=2, version="1.0.0")
    target = first.targets.order_by("name").first()
    version = Conversation.objects.filter(run=first).first().scenario.metric_version
    scenarios = Scenario.objects.filter(metric_version=version)
    later = completed_run(
        targets=[target],
        versions=[version],
        outcomes=[(s, target, True) for s in scenarios],
        publish_as=None,
        official=False,
        name="Second look",
    )
    later.release = first.release
    later.is_official = True
    later.finished_at = first.finished_at + timedelta(days=3)
    later.save(update_fields=["release", "is_official", "finished_at"])
    # The older run stays the release's headline: public pages list it first.
    first.is_headline = True
    first.save(update_fields=["is_headline"])
    results_refresh(run=later, n_resamples=50)

    html = client.get(reverse("results:label", args=[target.pk]), {"run": later.pk}).content
    history = html.decode().split('data-testid="label-history"')[1].split("</section>")[0]
    heading = history.split("</h2>")[0]
    assert "across runs of release 1.0.0" in heading
    assert "across releases" not in heading
    columns = history.split('data-testid="history-column">')[1:]
    assert [c.split("<span")[0] for c in columns] == [first.name, "Second look"]
    assert f"Change since {first.name} (release 1.0.0)" in history
    category = version.label_category
    change = paired_change(
        run_cluster_counts(run_id=later.pk, target_id=target.pk, category_id=category.pk),
        run_cluster_counts(run_id=first.pk, target_id=target.pk, category_id=category.pk),
    )
    assert change["paired"]
    assert change["estimate"]["value"] > 0  # the later run passed everything
    assert change_text(change) in history
    assert change_text(change).startswith("+")


def test_configure_model_names_the_model_line(db):
    from django.core.management import call_command

    from llm.models import ModelConfiguration

    call_command(
        "configure_model", "--name", "Acme Chat v3", "--offline", "--model-line", "Acme Chat"
    )
    assert ModelConfiguration.objects.get(name="Acme Chat v3").model_line == "Acme Chat"
