"""The demo seed: a published release, offline scenarios and a complete offline run."""

from functools import partial

import pytest

from evaluations.demo import DEMO_RUN_NAME, demo_run_seed, demo_scenarios_seed
from evaluations.models import Conversation, EvaluationRun, Judgment, Scenario
from llm.demo import demo_configurations_seed
from llm.models import LLMCall
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from metrics_registry.models import Release
from metrics_registry.taxonomy import LABEL_CATEGORIES, SUBAREA_SLUGS
from results.services.releases import RELEASE_FREEZES
from rubrics.demo import demo_rubric_items_seed
from rubrics.models import RubricItem

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's whole offline run"),
    pytest.mark.embedded,
]


def test_catalogue_covers_every_subarea_both_polarities_and_valid_categories():
    assert len(DEMO_METRICS) >= 60
    assert {slug for m in DEMO_METRICS for slug in m[3]} == set(SUBAREA_SLUGS)
    assert {m[2] for m in DEMO_METRICS} == {"positive", "negative"}
    polarity_of = {slug: polarity for slug, _, polarity, _ in LABEL_CATEGORIES}
    assert all(polarity_of[m[4]] == m[2] for m in DEMO_METRICS)
    assert len({m[1] for m in DEMO_METRICS}) == len(DEMO_METRICS)


def _seed_all() -> list[str]:
    return [
        step()
        for step in (
            demo_configurations_seed,
            registry_demo.demo_registry_seed,
            partial(registry_demo.demo_release_seed, freezes=RELEASE_FREEZES),
            demo_rubric_items_seed,
            demo_scenarios_seed,
            demo_run_seed,
        )
    ]


def test_demo_seed_runs_the_release_offline_completely_and_only_once(monkeypatch):
    # Two positive and two negative metrics keep the test short; the steps are the same.
    small = [m for m in DEMO_METRICS if m[2] == "positive"][:2] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:2]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()

    release = Release.objects.get(version=registry_demo.DEMO_RELEASE_VERSION)
    assert release.status == "published"
    assert release.items.count() == 4
    assert Scenario.objects.active().expanded().count() == 4 * 6
    run = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert run.status == "completed"
    assert run.conversations_total == run.conversations_completed == 4 * 6 * 3
    conversations = Conversation.objects.filter(run=run)
    assert all(c.is_offline and c.turns.count() == 8 for c in conversations)
    # The plain judge reads each conversation three times, the panel's kind and harsh judges
    # once each; the verdict is the majority of the three judges' own verdicts.
    assert run.panel_judges.count() == 2
    judgments = Judgment.objects.filter(conversation__run=run).select_related("judge")
    assert judgments.count() == 4 * 6 * 3 * (3 + 1 + 1)
    assert judgments.filter(judge=run.judge).count() == 4 * 6 * 3 * 3
    passed_by: dict[str, int] = {}
    for conversation in conversations.select_related("scenario__metric_version"):
        negative = conversation.scenario.metric_version.polarity == "negative"
        by_judge: dict[str, list[bool]] = {}
        for j in judgments:
            if j.conversation_id == conversation.pk:
                by_judge.setdefault(j.judge.name, []).append(j.present)
        assert len(by_judge) == 3
        presents = [sum(r) * 2 > len(r) for r in by_judge.values()]
        assert conversation.verdict_passed == ((sum(presents) >= 2) != negative)
        for name, readings in by_judge.items():
            passed_by[name] = passed_by.get(name, 0) + (
                (sum(readings) * 2 > len(readings)) != negative
            )
    assert passed_by["Offline judge: lenient"] > passed_by["Offline judge: strict"], passed_by
    assert RubricItem.objects.count() >= 4
    # The offline targets behave differently: the careful one avoids the negative behaviours
    # more often than the agreeable one, and shows the positive ones more often.
    for polarity in ("positive", "negative"):
        rates = {}
        for name in ("careful", "agreeable"):
            mine = conversations.filter(
                target__name=f"Offline target: {name}",
                scenario__metric_version__polarity=polarity,
            )
            rates[name] = mine.filter(verdict_passed=True).count() / mine.count()
        assert rates["careful"] > rates["agreeable"] + 0.3, (polarity, rates)

    calls = LLMCall.objects.count()
    second = _seed_all()
    assert LLMCall.objects.count() == calls
    assert "Demo run: kept (completed)." in second
    # The main run, the anchor study pair and the earlier run that gives labels a history.
    assert EvaluationRun.objects.count() == 4


def test_the_demo_publishes_an_earlier_run_so_each_label_has_a_history(monkeypatch, client):
    from evaluations.demo import DEMO_EARLIER_RUN_NAME
    from results.demo import demo_summaries_seed
    from results.selectors import public_run_default, public_runs

    small = [m for m in DEMO_METRICS if m[2] == "positive"][:2] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:1]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()
    demo_summaries_seed()

    earlier = EvaluationRun.objects.get(name=DEMO_EARLIER_RUN_NAME)
    main = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert earlier.finished_at < main.finished_at
    assert set(public_runs()) == {earlier, main}
    # The main run stays what visitors open on; the earlier one is a column of the history.
    assert public_run_default() == main
    target = main.targets.order_by("pk").first()
    response = client.get(f"/label/{target.pk}/?run={main.pk}")
    assert response.status_code == 200
    history = response.context["history"]
    assert [c.run for c in history["columns"]] == [earlier, main]
    page = response.content.decode()
    assert 'data-testid="label-history"' in page
    assert page.count('data-testid="history-column"') == 2
    assert "cannot be paired" not in page  # both runs used the same base scenarios


def test_the_demo_anchor_study_gives_the_consistency_figure_data(monkeypatch):
    from evaluations.demo import DEMO_ANCHOR_STUDY, DEMO_ANCHOR_STUDY_REPLICATES
    from results.services.anchors import anchor_consistency
    from stats.estimates import Estimate

    small = [m for m in DEMO_METRICS if m[2] == "positive"][:2]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()
    study = {name: EvaluationRun.objects.get(name=name) for name, _ in DEMO_ANCHOR_STUDY}
    figures = {}
    for name, use_anchors in DEMO_ANCHOR_STUDY:
        run = study[name]
        assert run.status == "completed"
        assert run.use_anchors is use_anchors
        # metrics × scenarios × replicates
        assert run.conversations_completed == 2 * 6 * DEMO_ANCHOR_STUDY_REPLICATES
        figure = anchor_consistency(run, n_resamples=200)
        assert figure["available"]
        figures[use_anchors] = Estimate.from_dict(figure["disagreement"])
    assert figures[True].n == figures[False].n == 2 * 6 * 3  # groups × anchors
    # No comparison here: on two metrics the figures turn on the conversations' seeds, which
    # follow primary keys (PostgreSQL's sequences do not roll back between tests). On the whole
    # demo release anchors cut the disagreement clearly (the methodology page's figure).
    # The main run stays the one public pages open on.
    main = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert main.finished_at > max(run.finished_at for run in study.values())


def test_demo_run_is_seeded_as_the_official_public_run(monkeypatch, client):
    from django.urls import reverse

    from results.demo import demo_summaries_seed

    small = [m for m in DEMO_METRICS if m[2] == "positive"][:1] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:1]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()
    assert "official run" in demo_summaries_seed()
    run = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert run.is_official
    assert run.official_changed_at is not None
    html = client.get(reverse("results:explore")).content.decode()
    assert DEMO_RUN_NAME in html
    target = run.targets.order_by("name").first()
    assert client.get(reverse("results:label", args=[target.pk])).status_code == 200
    # The anchor study is published with the release the demo run used, and shows.
    from results.models import AnchorStudy

    study = AnchorStudy.objects.get()
    assert study.release_id == run.release_id
    page = client.get(reverse("results:anchor-study")).content.decode()
    assert 'data-testid="anchor-paired"' in page
    assert run.release.version in page
    # Both say plainly that the demo's models are offline stand-ins, as the other pages do.
    home = client.get(reverse("core:home")).content.decode()
    assert 'data-testid="headline-findings"' in home
    for html in (home, page):
        assert 'data-testid="offline-notice"' in html
        assert "These are not real models." in html


def test_demo_blind_queues_rate_a_held_back_part_of_the_demo_run(monkeypatch, client):
    """The blind queues are drawn after the demo run finishes and before it is made official:
    their few scenarios stay off the public pages until the queues close."""
    from django.urls import reverse

    from core.demo import demo_accounts_seed
    from results.demo import demo_summaries_seed
    from review.blindness import BLIND_KINDS
    from review.demo import DEMO_HELD_SCENARIOS, demo_blind_queues_seed
    from review.models import QueueItem, RatingQueue
    from review.services import queue_set_status

    small = [m for m in DEMO_METRICS if m[2] == "positive"][:1] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:1]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    demo_accounts_seed()  # the external panel's raters
    _seed_all()
    assert "created" in demo_blind_queues_seed()
    demo_summaries_seed()
    run = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert run.is_official
    items = QueueItem.objects.filter(kind__in=BLIND_KINDS)
    assert {"judge_verdict", "external_panel", "conversation"} <= set(
        items.values_list("kind", flat=True)
    )
    rated = Conversation.objects.filter(pk__in=items.values("object_id"))
    assert set(rated.values_list("run_id", flat=True)) == {run.pk}
    held = set(rated.values_list("scenario_id", flat=True))
    assert 1 <= len(held) <= DEMO_HELD_SCENARIOS
    shown = Conversation.objects.filter(run=run).exclude(scenario__in=held).first()
    hidden = Conversation.objects.filter(run=run, scenario__in=held).first()
    assert client.get(reverse("results:conversation", args=[shown.pk])).status_code == 200
    assert client.get(reverse("results:conversation", args=[hidden.pk])).status_code == 404
    for queue in RatingQueue.objects.filter(kind__in=BLIND_KINDS):
        queue_set_status(queue=queue, status="closed")
    assert client.get(reverse("results:conversation", args=[hidden.pk])).status_code == 200
