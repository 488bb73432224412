"""Public results pages: anonymous access, which run is public, traceability, bounded queries."""

import pytest
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.models import Conversation, RunStatus
from evaluations.services.official import run_set_official
from results.models import PassRateSummary
from results.templatetags.results_tags import format_figure
from tests.evaluations.factories import EvaluationRunFactory
from tests.metrics_registry.factories import ROLES, release_with
from tests.results.public_data import EVIDENCE, published_run

pytestmark = pytest.mark.django_db


def _urls(run):
    a, b = run.targets.order_by("name")[:2]
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    key = conversation.scenario.metric_version.metric.key
    return {
        "explore": reverse("results:explore"),
        "explore-drill": reverse("results:explore")
        + f"?subarea=agency-purpose&compare={b.pk}&age=teen",
        "metrics": reverse("results:metric-list"),
        "metric": reverse("results:metric", args=[key]),
        "conversation": reverse("results:conversation", args=[conversation.pk]),
        "label": reverse("results:label", args=[a.pk]),
        "compare": reverse("results:label-compare") + f"?a={a.pk}&b={b.pk}",
        "compare-chooser": reverse("results:label-compare"),
        "label-svg": reverse("results:label-svg", args=[a.pk]),
        "badge": reverse("results:label-badge", args=[a.pk]),
        "release": reverse("metrics_registry:release_detail", args=[run.release.version]),
    }


@pytest.mark.parametrize("role", ROLES)
def test_every_public_page_opens_for_every_role_and_names_release_and_run(role, client, request):
    run = published_run()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    for name, url in _urls(run).items():
        response = client.get(url)
        assert response.status_code == 200, name
        if name not in ("label-svg", "badge", "release"):
            html = response.content.decode()
            assert 'data-testid="run-banner"' in html, name
            assert reverse("metrics_registry:release_detail", args=[run.release.version]) in html
            assert f"?run={run.pk}" in html, name
            assert 'data-testid="offline-badge"' in html, name  # offline targets are labelled


def test_label_compare_without_two_models_is_the_chooser(client, django_assert_max_num_queries):
    run = published_run()
    a, b = run.targets.order_by("name")
    url = reverse("results:label-compare")
    with django_assert_max_num_queries(21):
        response = client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="compare-chooser"' in html
    assert f'<option value="{a.pk}" selected>' in html  # two different models by default
    assert f'<option value="{b.pk}" selected>' in html
    # Arriving with one model chosen keeps it, and the age.
    html = client.get(url, {"b": a.pk, "age": "teen"}).content.decode()
    assert 'name="age" value="teen"' in html
    assert html.count(f'<option value="{a.pk}" selected>') == 2  # b chosen, a by default
    compared = client.get(url, {"run": run.pk, "a": a.pk, "b": b.pk}).content.decode()
    assert 'data-testid="label-compare"' in compared
    # No published results: nothing to choose from.
    run.is_official = False
    run.save(update_fields=["is_official"])
    assert client.get(url, {"run": run.pk}).status_code == 404


def test_public_text_names_no_workspace_address(client):
    run = published_run()
    for url in (
        reverse("results:methodology"),
        reverse("results:label", args=[run.targets.first().pk]),
        reverse("results-api:run-calibration", args=[run.pk]),
    ):
        text = client.get(url).content.decode()
        assert "/review/" not in text, url
        assert "/manage/" not in text, url


def test_only_official_runs_are_public(client, maintainer):
    official = published_run(version="1.0.0")
    test_run = published_run(version="1.1.0", official=False, names=("Test A", "Test B"))
    # The newer release's unofficial run does not replace the official one.
    html = client.get(reverse("results:explore")).content.decode()
    assert "Offline careful 1.0.0" in html
    assert "Test A" not in html
    assert client.get(reverse("results:explore"), {"run": test_run.pk}).status_code == 404
    hidden = Conversation.objects.filter(run=test_run).first()
    assert client.get(reverse("results:conversation", args=[hidden.pk])).status_code == 404
    target = test_run.targets.first()
    label = reverse("results:label", args=[target.pk])
    assert client.get(label).status_code == 404
    # Maintainers read an unofficial run's conversations, marked as not public.
    client.force_login(maintainer)
    html = client.get(reverse("results:conversation", args=[hidden.pk])).content.decode()
    assert 'data-testid="private-badge"' in html
    # Making it official (audited) publishes it.
    response = client.post(
        reverse("evaluations:run-official", args=[test_run.pk]), {"official": "1"}
    )
    assert response.status_code == 302
    test_run.refresh_from_db()
    assert test_run.is_official
    assert test_run.official_changed_by == maintainer
    assert test_run.official_changed_at is not None
    client.logout()
    assert client.get(reverse("results:explore"), {"run": test_run.pk}).status_code == 200
    assert official.pk != test_run.pk


def test_run_official_refuses_unfinished_runs_and_draft_releases(maintainer):
    run = published_run(official=False)
    run.status = RunStatus.RUNNING
    run.save(update_fields=["status"])
    with pytest.raises(ApplicationError, match="completed"):
        run_set_official(run=run, official=True, changed_by=maintainer)
    draft = EvaluationRunFactory(
        release=release_with("2.0.0", [], publish=False), status=RunStatus.COMPLETED
    )
    with pytest.raises(ApplicationError, match="published release"):
        run_set_official(run=draft, official=True, changed_by=maintainer)


def test_run_official_action_is_for_maintainers_only(client, researcher):
    run = published_run(official=False)
    client.force_login(researcher)
    response = client.post(reverse("evaluations:run-official", args=[run.pk]), {"official": "1"})
    assert response.status_code == 403
    run.refresh_from_db()
    assert not run.is_official


def test_explore_table_shows_each_subarea_estimate_of_the_chosen_model(client):
    run = published_run()
    target = run.targets.order_by("name").last()
    html = client.get(
        reverse("results:explore"), {"model": target.pk, "age": "teen", "polarity": "negative"}
    ).content.decode()
    row = PassRateSummary.objects.get(
        run=run,
        target=target,
        level="subarea",
        age_context="teen",
        polarity="negative",
        subarea__slug="agency-purpose",
    )
    e = row.estimate
    expected = f"{format_figure(e.value, 'proportion')}</strong>"
    assert expected in html
    assert f"n = {e.n}" in html
    # The wheel links each subarea segment to its drill-down.
    assert "subarea=agency-purpose" in html
    assert 'data-testid="sunburst"' in html


def test_drilling_to_a_subarea_lists_its_metrics_with_links(client):
    run = published_run()
    html = client.get(
        reverse("results:explore"), {"subarea": "agency-purpose", "polarity": "positive"}
    ).content.decode()
    key = (
        PassRateSummary.objects.filter(run=run, level="metric", polarity="positive")
        .first()
        .metric_version.metric.key
    )
    assert reverse("results:metric", args=[key]) in html
    assert "ib-ring-2" in html  # the metric ring of the selected subarea


def test_conversation_shows_evidence_verdicts_and_latent_goal_after_transcript(client):
    run = published_run()
    conversation = Conversation.objects.filter(run=run).first()
    html = client.get(reverse("results:conversation", args=[conversation.pk])).content.decode()
    assert f'data-testid="evidence">{EVIDENCE}</mark>' in html
    assert html.count('data-testid="judgment"') == 3
    # The full justification, never cut.
    assert "which is the behaviour the metric describes; the final turn confirms it." in html
    assert 'data-testid="anchor"' in html
    transcript_at = html.index('data-testid="transcript"')
    latent_at = html.index("SECRET-LATENT")
    assert latent_at > transcript_at
    assert "secretly pursuing" in html
    assert html.count("SECRET-LATENT") == 1
    expected = "Pass" if conversation.verdict_passed else "Fail"
    assert f"{expected}</span>" in html


def test_metric_page_hides_latent_goal_and_links_each_conversation(client):
    run = published_run()
    conversation = Conversation.objects.filter(run=run).first()
    key = conversation.scenario.metric_version.metric.key
    html = client.get(reverse("results:metric", args=[key])).content.decode()
    assert "SECRET-LATENT" not in html
    assert reverse("results:conversation", args=[conversation.pk]) in html
    assert html.count('data-testid="scenario"') == 6
    assert 'class="ib-forest"' in html
    assert 'data-testid="crumb-subarea"' in html


def test_no_public_run_says_so(client):
    published_run(official=False)
    for url in (reverse("results:explore"), reverse("results:metric-list")):
        assert b'data-testid="no-results"' in client.get(url).content or url.endswith("metrics/")


def test_draft_metrics_and_unknown_keys_are_404(client):
    published_run()
    assert client.get(reverse("results:metric", args=["IB-NOPE"])).status_code == 404
    assert client.get(reverse("results:conversation", args=[999999])).status_code == 404
    assert client.get(reverse("results:label", args=[999999])).status_code == 404


@pytest.mark.parametrize("n_metrics", [2, 8])
def test_public_pages_run_a_bounded_number_of_queries(
    n_metrics, client, django_assert_max_num_queries
):
    """The same ceiling holds for 2 and 8 metrics: no query per metric, model or turn."""
    run = published_run(n_metrics=n_metrics)
    for name, url in _urls(run).items():
        # Bounded whatever the size: the offline and synthetic labels cost three EXISTS, the
        # page cache's data stamp one, judge trust two (the ratings' stamp, then the figures
        # the refresh stored), the run's panel of judges (for self-preference) one, the run's
        # languages (for the language switch) one.
        with django_assert_max_num_queries(23):
            assert client.get(url).status_code == 200, name


def test_mark_quotes_marks_each_quote_once_and_merges_overlaps():
    from results.public_conversations import mark_quotes

    pieces = mark_quotes("Alpha beta gamma delta", [("beta gamma", "r1"), ("GAMMA delta", "r2")])
    assert [(p.text, p.marked) for p in pieces] == [("Alpha ", False), ("beta gamma delta", True)]
    assert "".join(p.text for p in pieces) == "Alpha beta gamma delta"
    untouched = mark_quotes("Nothing here", [("absent quote", "r1"), ("", "r2")])
    assert [(p.text, p.marked) for p in untouched] == [("Nothing here", False)]


def test_methodology_draws_each_table_as_a_forest_plot(client):
    run = published_run(n_metrics=4)
    html = client.get(reverse("results:methodology")).content.decode()
    assert 'data-testid="methodology-plots"' in html
    for polarity in ("positive", "negative"):
        start = html.index(f'id="plot-overall-{polarity}"')
        plot = html[start : html.index("</figure>", start)]
        rows = PassRateSummary.objects.filter(
            run=run, level="overall", age_context="all", polarity=polarity
        )
        assert plot.count("<circle") == rows.count()
        for row in rows:
            assert f"{row.rate * 100:.0f}%" in plot
    assert 'id="plot-teen-adult"' in html
    assert 'id="plot-judge"' in html


def test_run_page_links_to_its_results_and_only_maintainers_may_publish(
    client, maintainer, researcher
):
    run = published_run(official=False)
    detail = reverse("evaluations:run-detail", args=[run.pk])
    official_url = reverse("evaluations:run-official", args=[run.pk])
    conversations_url = reverse("results:run-conversations", args=[run.pk])
    client.force_login(researcher)
    html = client.get(detail).content.decode()
    assert conversations_url in html
    assert f"{conversations_url}?status=failed" in html
    assert official_url not in html
    client.force_login(maintainer)
    html = client.get(detail).content.decode()
    assert official_url in html
    assert "Not public" in html


def test_run_conversation_list_is_for_staff_and_filters_failed(client, researcher):
    run = published_run(official=False)
    failed = Conversation.objects.filter(run=run).first()
    failed.status = "failed"
    failed.error = "Target timed out after 3 attempts"
    failed.save(update_fields=["status", "error"])
    url = reverse("results:run-conversations", args=[run.pk])
    assert client.get(url).status_code in (302, 403)
    client.force_login(researcher)
    html = client.get(url, {"status": "failed"}).content.decode()
    assert "Target timed out after 3 attempts" in html
    assert html.count(reverse("results:conversation", args=[failed.pk])) == 1
    assert html.count("<tr>") == 2  # header and the one failed conversation


def test_draft_metrics_are_never_public(client, api_client):
    from tests.metrics_registry.factories import MetricFactory

    published_run()
    draft = MetricFactory(status="draft")
    assert client.get(reverse("results:metric", args=[draft.key])).status_code == 404
    assert draft.key not in client.get(reverse("results:metric-list")).content.decode()
    url = reverse("results-api:metric-results", args=[draft.key])
    assert api_client.get(url).status_code == 404


def test_a_reply_cut_off_at_max_tokens_is_marked_on_the_conversation_page(client):
    from django.core.cache import caches

    from evaluations.models import Turn

    run = published_run()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    url = reverse("results:conversation", args=[conversation.pk])
    assert 'data-testid="cut-off"' not in client.get(url).content.decode()
    Turn.objects.filter(conversation=conversation, index=1).update(assistant_cut_off=True)
    caches["pages"].clear()  # signed-out pages are cached; a stored turn never changes in practice
    html = client.get(url).content.decode()
    assert html.count('data-testid="cut-off"') == 1
    assert "cut off at max_tokens" in html


def test_a_cell_whose_conversations_all_failed_says_what_was_left_out(client):
    from results.public import metric_results
    from results.services import results_refresh

    run = published_run()
    target = run.targets.order_by("name").first()
    first = Conversation.objects.filter(run=run, target=target).first()
    version = first.scenario.metric_version
    teen = Conversation.objects.filter(
        run=run, target=target, scenario__metric_version=version, scenario__age_context="teen"
    )
    assert teen.count() == 3
    teen.update(status="failed", verdict_passed=None, failure_kind="target_error")
    results_refresh(run=run, n_resamples=200)
    [row] = [r for r in metric_results(run=run, version=version, targets=[target])]
    assert not row.teen.defined
    assert row.teen.reason == "no judged conversations"
    assert [(e.reason, e.count) for e in row.teen.excluded] == [("target error", 3)]
    html = client.get(reverse("results:metric", args=[version.metric.key])).content.decode()
    assert "3 excluded (target error: 3)" in html


def test_a_run_without_model_calls_shows_no_cost_section(client, api_client):
    """A run whose rows were written without a model call (seeded, synthetic) has no cost to
    state; the API still says it made no call."""
    run = published_run()
    html = client.get(reverse("results:methodology")).content.decode()
    assert 'data-testid="run-cost"' not in html
    cost = api_client.get(reverse("results-api:run-detail", args=[run.pk])).json()["cost"]
    assert (cost["total"]["calls"], cost["total"]["cost"], cost["total"]["status"]) == (
        0,
        "0.00000000",
        "known",
    )


def test_the_conversation_page_says_the_scenario_language_and_its_provenance(client):
    from django.core.cache import caches

    from evaluations.models import Scenario, TranslationProvenance

    run = published_run()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    url = reverse("results:conversation", args=[conversation.pk])
    assert "Language: English (en) · Written natively" in client.get(url).content.decode()
    Scenario.objects.filter(pk=conversation.scenario_id).update(
        language="pt-BR", translation_provenance=TranslationProvenance.MACHINE_REVIEWED
    )
    caches["pages"].clear()  # signed-out pages are cached; a run's scenario never changes
    html = client.get(url).content.decode()
    assert "Language: Brazilian Portuguese (pt-BR) · Machine-translated and reviewed" in html
