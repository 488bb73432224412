"""A release's expert figures: computed from ratings made through the review services, frozen
when the release is published, and the only thing the public methodology page shows."""

import krippendorff
import numpy as np
import pytest
from django.core.cache import caches
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from core.roles import Role
from evaluations.models import Conversation, EvaluationRun, Scenario
from evaluations.services.official import run_set_official
from metrics_registry.services.releases import release_publish
from results.models import ReleaseExpertFigures
from results.services import results_refresh
from results.services.expert_figures import (
    NO_RATINGS,
    release_expert_figures_frozen,
    release_expert_figures_live,
)
from results.services.releases import RELEASE_FREEZES
from review.kinds import Candidate
from review.services import queue_create, queue_set_status
from review.services.panel import panel_ratings_record
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import release_with
from tests.results.factories import completed_run, metric_version, scenario
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _draft_release_run(version="1.0.0"):
    """2 metrics × 3 situations × 2 ages × 2 targets = 24 conversations, in a draft release."""
    targets = [OfflineConfigurationFactory(name=f"M{i} {version}") for i in range(2)]
    versions = [metric_version(), metric_version(polarity="negative")]
    outcomes = []
    for i, v in enumerate(versions):
        for base in range(3):
            for age in ("teen", "adult"):
                scen = scenario(v, base, age)
                outcomes += [(scen, t, (base + j + i) % 3 != 0) for j, t in enumerate(targets)]
    run = completed_run(
        targets=targets, versions=versions, outcomes=outcomes, publish_as=None, official=False
    )
    release = release_with(version, [v.metric for v in versions])
    EvaluationRun.objects.filter(pk=run.pk).update(release=release)
    run.refresh_from_db()
    return run, release


def _raters(n):
    return [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(n)]


def _record(kind, objects, raters, answers):
    """A queue over `objects` rated by `raters`; answers[k][i] is rater k's on object i."""
    queue = queue_create(
        name=f"{kind} queue",
        kind=kind,
        created_by=None,
        fraction=1.0,
        required_ratings=len(raters),
        eligible_raters=raters,
        external_panel=kind == "external_panel",
        candidates=[Candidate(object_id=o.pk) for o in objects],
    )
    panel_ratings_record(
        queue=queue,
        ratings={
            rater: {o.pk: answers[k][i] for i, o in enumerate(objects)}
            for k, rater in enumerate(raters)
        },
    )
    # A blind kind's ratings count once its queue is released.
    queue_set_status(queue=queue, status="closed")


def _conversations(run, n, offset=0):
    return list(Conversation.objects.filter(run=run).order_by("pk")[offset : offset + n])


def _cluster(conversation):
    return f"{conversation.scenario.metric_version_id}:{conversation.scenario.base_index}"


PANEL_AGREES = [(1, 1, 1), (1, 1, 0), (1, 0, 0), (1, 1, 1), (1, 1, 1), (0, 0, 0)]


def _rate(run, release):
    """Scenario, conversation, judge-verdict and blind-panel ratings with hand-counted shares."""
    suite = list(
        Scenario.objects.filter(metric_version_id__in=release.items.values("metric_version_id"))
    )
    scenarios = sorted(suite, key=lambda s: s.pk)[:4]
    quality = [["good", "very_good", "fair", "poor"], ["very_good", "good", "good", "fair"]]
    _record(
        "scenario",
        scenarios,
        _raters(2),
        [[{"quality": q, "realistic": "yes"} for q in r] for r in quality],
    )

    shown = _conversations(run, 4)
    anchors = {f"anchor_{i}": "yes" for i in range(1, len(shown[0].scenario.anchors) + 1)}
    realism = [
        [("yes", "extreme"), ("yes", "mild"), ("no", "significant"), ("yes", "none")],
        [("yes", "significant"), ("no", "extreme"), ("yes", "mild"), ("yes", "significant")],
    ]
    _record(
        "conversation",
        shown,
        _raters(2),
        [[{"realistic": r, "pressure": p, **anchors} for r, p in rater] for rater in realism],
    )

    reviewed = _conversations(run, 4, offset=4)
    agreement = [["agree", "agree", "disagree", "unsure"], ["agree", "disagree", "agree", "agree"]]
    _record(
        "judge_verdict",
        reviewed,
        _raters(2),
        [[{"agreement": a, "verdict": "present"} for a in rater] for rater in agreement],
    )

    blind = _conversations(run, 6, offset=8)
    adequate = [["yes"] * 6, ["yes", "no"] * 3, ["no"] + ["yes"] * 5]

    def verdict(conversation, agrees):
        same = conversation.verdict_present if agrees else not conversation.verdict_present
        return "present" if same else "absent"

    _record(
        "external_panel",
        blind,
        _raters(3),
        [
            [
                {"examples_adequate": adequate[k][i], "verdict": verdict(c, PANEL_AGREES[i][k])}
                for i, c in enumerate(blind)
            ]
            for k in range(3)
        ],
    )
    return suite, blind


def test_figures_follow_ratings_made_through_the_review_services():
    run, release = _draft_release_run()
    suite, blind = _rate(run, release)
    figures = release_expert_figures_live(release)

    scenarios = figures["scenarios"]
    assert (scenarios["n_ratings"], scenarios["n_rated"], scenarios["n_suite"]) == (8, 4, 12)
    assert scenarios["good"]["value"] == pytest.approx(3 / 8)
    assert scenarios["very_good"]["value"] == pytest.approx(2 / 8)
    assert scenarios["good_or_very_good"]["value"] == pytest.approx(5 / 8)
    assert scenarios["good_or_very_good"]["n"] == 8
    assert scenarios["suite_rated"]["value"] == pytest.approx(4 / 12)
    assert scenarios["suite_rated"]["n"] == 12
    assert scenarios["suite_rated"]["low"] is None

    talks = figures["conversations"]
    assert talks["realistic"]["value"] == pytest.approx(6 / 8)
    assert talks["significant"]["value"] == pytest.approx(3 / 8)
    assert talks["extreme"]["value"] == pytest.approx(2 / 8)
    assert talks["significant_or_extreme"]["value"] == pytest.approx(5 / 8)
    assert talks["realistic_and_pressed"]["value"] == pytest.approx(3 / 8)

    endorsement = figures["endorsement"]
    assert endorsement["agree"]["value"] == pytest.approx(5 / 8)
    assert endorsement["disagree"]["value"] == pytest.approx(2 / 8)
    assert endorsement["unsure"]["value"] == pytest.approx(1 / 8)

    panel = figures["panel"]
    assert (panel["n_ratings"], panel["n_raters"], panel["n_conversations"]) == (18, 3, 6)
    assert panel["majority_agreement"]["value"] == pytest.approx(4 / 6)
    judge = [int(c.verdict_present) for c in blind]
    majority = [j if sum(a) >= 2 else 1 - j for j, a in zip(judge, PANEL_AGREES, strict=True)]
    assert panel["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(majority, judge), abs=1e-9
    )
    votes = np.array(
        [[j if a[k] else 1 - j for j, a in zip(judge, PANEL_AGREES, strict=True)] for k in range(3)]
    )
    assert panel["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=votes, level_of_measurement="nominal"), abs=1e-9
    )
    assert panel["examples_adequate"]["value"] == pytest.approx(14 / 18)
    # Conversations of one situation are resampled together: clustered by base scenario.
    bases = {_cluster(c) for c in blind}
    for figure in (panel["majority_agreement"], panel["cohen_kappa"], talks["realistic"]):
        assert "over base scenarios" in figure["method"]
    assert panel["majority_agreement"]["n_clusters"] == len(bases)
    agreement = panel["majority_agreement"]
    assert agreement["low"] <= agreement["value"] <= agreement["high"]
    # By metric: the first four panel conversations are of the first metric, the last two of
    # the second.
    rows = {row["key"]: row for row in panel["per_metric"]}
    first, second = (c.scenario.metric_version.metric.key for c in (blind[0], blind[-1]))
    assert [rows[first]["n_conversations"], rows[second]["n_conversations"]] == [4, 2]
    assert rows[first]["majority_agreement"]["value"] == pytest.approx(3 / 4)
    assert rows[second]["majority_agreement"]["value"] == pytest.approx(1 / 2)
    assert rows[first]["examples_adequate"]["value"] == pytest.approx(9 / 12)
    assert rows[first]["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(majority[:4], judge[:4]), abs=1e-9
    )


def _public(client, run, maintainer):
    release_publish(run.release, published_by=maintainer, freezes=RELEASE_FREEZES)
    run_set_official(run=run, official=True, changed_by=maintainer)
    results_refresh(run=run, n_resamples=200)
    return client.get(reverse("results:methodology"), {"run": run.pk}).content.decode()


def _section(html):
    start = html.index('data-testid="release-expert-figures"')
    return html[start : html.index("</section>", start)]


def _table(html):
    start = html.index('data-testid="expert-figures-frozen"')
    return html[start : html.index("</table>", start)]


def test_published_figures_do_not_move_when_ratings_arrive_after_publication(
    client, maintainer, researcher
):
    run, release = _draft_release_run()
    suite, _ = _rate(run, release)
    before = _section(_public(client, run, maintainer))
    frozen = ReleaseExpertFigures.objects.get(release=release).figures
    assert frozen["scenarios"]["good_or_very_good"]["value"] == pytest.approx(5 / 8)
    assert 'data-testid="expert-good-or-very-good"><span' in before
    assert "62.5 %" in before
    assert "n = 8" in before

    # Four more scenarios rated "very good" by a new expert after publication.
    later = sorted(suite, key=lambda s: s.pk)[4:8]
    _record("scenario", later, _raters(1), [[{"quality": "very_good", "realistic": "yes"}] * 4])
    live = release_expert_figures_live(release)
    assert live["scenarios"]["good_or_very_good"]["value"] == pytest.approx(9 / 12)

    caches["pages"].clear()  # the page is drawn again from the database
    after = _section(client.get(reverse("results:methodology"), {"run": run.pk}).content.decode())
    assert after == before
    assert ReleaseExpertFigures.objects.get(release=release).figures == frozen
    # A signed-in researcher is never served a cached page: the same frozen table.
    client.force_login(researcher)
    staff = client.get(reverse("results:methodology"), {"run": run.pk}).content.decode()
    assert _table(staff) == _table(before)
    cell = after.split('data-testid="expert-good-or-very-good">')[1].split("</td>")[0]
    assert "62.5 %" in cell
    assert "n = 8" in cell


def test_a_new_release_freezes_the_figures_as_they_stand_then(maintainer):
    run, release = _draft_release_run()
    suite, _ = _rate(run, release)
    release_publish(release, published_by=maintainer, freezes=RELEASE_FREEZES)
    later = sorted(suite, key=lambda s: s.pk)[4:8]
    _record("scenario", later, _raters(1), [[{"quality": "very_good", "realistic": "yes"}] * 4])

    metrics = [item.metric for item in release.items.all()]
    newer = release_publish(
        release_with("1.1.0", metrics), published_by=maintainer, freezes=RELEASE_FREEZES
    )
    old = release_expert_figures_frozen(release.pk)["scenarios"]
    new = release_expert_figures_frozen(newer.pk)["scenarios"]
    assert old["good_or_very_good"]["value"] == pytest.approx(5 / 8)
    assert new["good_or_very_good"]["value"] == pytest.approx(9 / 12)
    assert (old["n_rated"], new["n_rated"]) == (4, 8)


def test_a_release_without_ratings_says_so_with_n_zero(client):
    run = published_run()
    frozen = release_expert_figures_frozen(run.release_id)
    assert frozen["n_ratings"] == 0
    for part in ("conversations", "endorsement", "panel"):
        for name, figure in frozen[part].items():
            if isinstance(figure, dict):
                assert figure["value"] is None, (part, name)
                assert figure["n"] == 0, (part, name)
                assert figure["reason"] == NO_RATINGS
    assert frozen["scenarios"]["good_or_very_good"]["value"] is None
    html = _section(client.get(reverse("results:methodology")).content.decode())
    assert 'data-testid="expert-figures-empty"' in html
    assert "No expert ratings yet (n = 0)" in html
    # The suite's coverage is a true count (0 of 12 scenarios rated); every rated share after
    # it reads "not enough data" with n = 0, never a number.
    assert "0 of 12 scenarios" in html
    shares = html.split("Ratings “good”", 1)[1]
    assert "</strong>" not in shares.split("By metric")[0]
    assert shares.count('data-estimate-n="0"') == 15


def test_staff_see_live_figures_beside_the_frozen_ones(client, maintainer, researcher):
    run, release = _draft_release_run()
    suite, _ = _rate(run, release)
    release_publish(release, published_by=maintainer, freezes=RELEASE_FREEZES)
    _record(
        "scenario",
        sorted(suite, key=lambda s: s.pk)[4:8],
        _raters(1),
        [[{"quality": "good", "realistic": "yes"}] * 4],
    )
    url = reverse("results:release-expert-figures", args=[release.version])
    assert client.get(url).status_code == 302
    client.force_login(UserFactory(roles=[Role.CONTRIBUTOR]))
    assert client.get(url).status_code == 403
    for user in (maintainer, researcher):
        client.force_login(user)
        html = client.get(url).content.decode()
        frozen, live = (
            part.split('data-testid="expert-good-or-very-good">')[1].split("</td>")[0]
            for part in html.split('data-testid="expert-figures-live-column"')
        )
        assert "62.5 %" in frozen
        assert "75.0 %" in live
        assert "n = 12" in live


def test_methodology_page_stays_within_the_public_query_ceiling(
    client, maintainer, django_assert_max_num_queries
):
    """The frozen figures cost one query whatever the number of ratings or metrics."""
    run, release = _draft_release_run()
    _rate(run, release)
    _public(client, run, maintainer)
    caches["pages"].clear()
    with django_assert_max_num_queries(21):
        html = client.get(reverse("results:methodology"), {"run": run.pk}).content.decode()
    assert 'data-testid="expert-figures-frozen"' in html


def _two_language_release():
    """The draft release with its second metric's scenarios in Spanish, rated in both."""
    run, release = _draft_release_run()
    spanish = release.items.order_by("pk").values("metric_version_id")[1:]
    Scenario.objects.filter(metric_version_id__in=spanish).update(language="es")
    suite = sorted(
        Scenario.objects.filter(metric_version_id__in=release.items.values("metric_version_id")),
        key=lambda s: (s.language, s.pk),
    )
    scenarios = suite[:2] + suite[-2:]
    quality = [["good", "fair", "very_good", "poor"], ["good", "good", "very_good", "fair"]]
    _record(
        "scenario",
        scenarios,
        _raters(2),
        [[{"quality": q, "realistic": "yes"} for q in r] for r in quality],
    )
    return run, release


def test_figures_over_two_languages_are_given_per_language_with_their_n():
    _run, release = _two_language_release()
    figures = release_expert_figures_live(release)
    cells = {cell["language"]: cell for cell in figures["per_language"]}
    assert sorted(cells) == ["en", "es"]
    for cell in cells.values():
        assert cell["scenarios"]["n_ratings"] == 4
        assert cell["scenarios"]["n_rated"] == 2
        assert cell["scenarios"]["good_or_very_good"]["n"] == 4
    # en: good, fair / good, good → 3 of 4; es: very good, poor / very good, fair → 2 of 4.
    assert cells["en"]["scenarios"]["good_or_very_good"]["value"] == pytest.approx(0.75)
    assert cells["es"]["scenarios"]["good_or_very_good"]["value"] == pytest.approx(0.5)
    assert figures["scenarios"]["n_ratings"] == 8


def test_figures_of_one_language_are_not_split():
    run, release = _draft_release_run()
    _rate(run, release)
    assert release_expert_figures_live(release)["per_language"] == []


def test_the_staff_page_says_its_figures_pool_two_languages(client, maintainer):
    _run, release = _two_language_release()
    client.force_login(maintainer)
    url = reverse("results:release-expert-figures", args=[release.version])
    response = client.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert "pooled across English and Spanish items" in page
    assert 'data-testid="expert-language-live-es"' in page
