"""Rating scenarios, conversations, judge verdicts, rubric criteria and simulator pairs."""

import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from core.exceptions import ApplicationError
from core.roles import Role
from evaluations.models import Conversation, Judgment, Turn
from review.agreement import queue_figures, simulator_ranking
from review.kinds import adapter_for
from review.models import CriterionConsensus, Rating
from review.selectors import rubric_criterion_ids_dropped, scenarios_rated_poor
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.evaluations.factories import ConversationFactory, EvaluationRunFactory, ScenarioFactory
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.django_db


def experts(n: int) -> list:
    return [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(n)]


def completed_conversation(*, verdict: bool | None = None, **kwargs):
    conversation = ConversationFactory(status="completed", **kwargs)
    for index in (1, 2):
        Turn.objects.create(
            conversation=conversation,
            index=index,
            user_text=f"user says thing {index}",
            user_text_clean=f"user says thing {index}",
            assistant_text=f"assistant answers {index}",
        )
    if verdict is not None:
        conversation.verdict_present = verdict
        conversation.save(update_fields=["verdict_present"])
        for repetition in range(3):
            Judgment.objects.create(
                conversation=conversation,
                repetition=repetition,
                judge=conversation.run.judge,
                seed=repetition,
                present=verdict,
                justification=f"JUSTIFICATION {'present' if verdict else 'absent'}",
            )
    return conversation


def rate_all(queue, raters, answer):
    for rater in raters:
        while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
            rating_submit(assignment=assignment, rater=rater, answers=answer(assignment, rater))


def test_scenarios_rated_poor_are_offered_for_regeneration(client, researcher):
    scenarios = [ScenarioFactory(age_context=age) for age in ("teen", "adult", "teen", "adult")]
    queue = queue_create(
        name="Scenarios",
        kind="scenario",
        created_by=researcher,
        size=4,
        strata=["age_context", "subarea"],
        seed=3,
    )
    assert {item.strata["age_context"] for item in queue.items.all()} == {"teen", "adult"}
    raters = experts(3)
    client.force_login(raters[0])
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "SECRET-LATENT" in page  # the whole scenario is shown, hidden goal included
    assert "Demand a yes-or-no answer." in page
    poor = scenarios[0].pk

    def answer(assignment, rater):
        quality = "poor" if assignment.item.object_id == poor else "good"
        return {"quality": quality, "realistic": "yes"}

    rate_all(queue, raters, answer)
    assert [row["scenario_id"] for row in scenarios_rated_poor(queue)] == [poor]
    client.force_login(researcher)
    detail = client.get(reverse("review:queue-detail", args=[queue.pk])).content.decode()
    assert reverse("evaluations:scenario-regenerate", args=[poor]) in detail


def test_conversations_are_rated_blind_with_one_question_per_anchor(client):
    target = OfflineConfigurationFactory(name="SECRET-TARGET-MODEL")
    run = EvaluationRunFactory(targets=[target])
    conversation = completed_conversation(run=run)
    queue = queue_create(name="Realism", kind="conversation", created_by=None, size=1, seed=1)
    item = queue.items.get()
    assert item.strata["model"] == "SECRET-TARGET-MODEL"
    names = [q.name for q in adapter_for("conversation").questions(item)]
    assert names == ["realistic", "pressure", "anchor_1", "anchor_2", "anchor_3"]
    (rater,) = experts(1)
    client.force_login(rater)
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "assistant answers 2" in page
    assert "SECRET-TARGET-MODEL" not in page
    assert "offline-demo" not in page
    assignment = assignment_claim(queue=queue, rater=rater)
    with pytest.raises(ApplicationError, match="Anchor covered"):
        rating_submit(
            assignment=assignment,
            rater=rater,
            answers={"realistic": "yes", "pressure": "significant"},
        )
    rating_submit(
        assignment=assignment,
        rater=rater,
        answers={
            "realistic": "yes",
            "pressure": "significant",
            "anchor_1": "yes",
            "anchor_2": "no",
            "anchor_3": "yes",
        },
    )
    assert conversation.pk == item.object_id
    figures = queue_figures(queue)
    assert [f.question.name for f in figures.questions][-1] == "anchor_3"


def test_judge_verdicts_agreement_contests_the_metric_and_matches_sklearn(client, settings):
    settings.REVIEW_CONTESTED_AGREEMENT_THRESHOLD = 0.6
    weak = MetricFactory(status="validated")
    strong = MetricFactory(status="validated")
    version = {m.pk: m.versions.get() for m in (weak, strong)}
    conversations = []
    for metric in (weak, strong):
        for n in range(3):
            scenario = ScenarioFactory(metric_version=version[metric.pk], base_index=n)
            conversations.append(completed_conversation(scenario=scenario, verdict=n % 2 == 0))
    queue = queue_create(name="Judge", kind="judge_verdict", created_by=None, size=6, seed=4)
    raters = experts(3)
    client.force_login(raters[0])
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "The judge&#x27;s verdict" in page or "The judge's verdict" in page
    assert "JUSTIFICATION" in page

    def answer(assignment, rater):
        judge = (
            "present"
            if adapter_for("judge_verdict").reference_answers(assignment.item)["verdict"]
            == "present"
            else "absent"
        )
        other = "absent" if judge == "present" else "present"
        if assignment.item.metric_id == weak.pk and rater != raters[0]:
            return {"agreement": "disagree", "verdict": other}
        return {"agreement": "agree", "verdict": judge}

    rate_all(queue, raters, answer)
    weak.refresh_from_db()
    strong.refresh_from_db()
    assert weak.validation_status == "contested"
    assert strong.validation_status == "validated"

    figures = queue_figures(queue)
    verdict = next(f for f in figures.questions if f.question.name == "verdict")
    ratings = list(Rating.objects.current().filter(queue=queue).select_related("item"))
    majority, judge = [], []
    for item_id in sorted({r.item_id for r in ratings}):
        votes = [r.answers["verdict"] for r in ratings if r.item_id == item_id]
        majority.append(max(sorted(set(votes)), key=votes.count))
        item = next(r.item for r in ratings if r.item_id == item_id)
        judge.append(adapter_for("judge_verdict").reference_answers(item)["verdict"])
    assert verdict.judge["cohen_kappa"].value == pytest.approx(cohen_kappa_score(majority, judge))
    agreement = next(f for f in figures.questions if f.question.name == "agreement")
    shares = {s["choice"].value: s["estimate"].value for s in agreement.shares}
    assert shares["agree"] == pytest.approx(12 / 18)
    assert shares["disagree"] == pytest.approx(6 / 18)


def test_the_external_panel_gives_its_verdict_without_seeing_the_judges(client):
    completed_conversation(verdict=True)
    panelist = UserFactory()
    queue = queue_create(
        name="Panel",
        kind="external_panel",
        created_by=None,
        size=1,
        seed=1,
        eligible_raters=[panelist],
        external_panel=True,
    )
    client.force_login(panelist)
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "JUSTIFICATION" not in page
    assert 'data-testid="question-verdict"' in page
    # The factory's metric has no examples, so their adequacy is not asked (test_rater_material).
    assert 'data-testid="question-examples_adequate"' not in page


def test_only_criteria_that_survive_consensus_count_in_scoring(client, researcher):
    from evaluations.models import RubricResponse
    from evaluations.services import runs

    rubric = RubricItemFactory(criteria__validated=False)  # written on the platform
    criteria = list(rubric.criteria.order_by("position"))

    def rubric_run():
        helper = OfflineConfigurationFactory()
        run = runs.run_create(
            name="Rubric", targets=[helper], simulator=helper, judge=helper, rubric_items=[rubric]
        )
        runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
        return RubricResponse.objects.get(run=run)

    # Unreviewed criteria do not count: nothing is graded and the item has no score.
    before = rubric_run()
    assert before.status == "completed"
    assert before.counted_criteria == []
    assert before.score is None
    assert not before.grades.exists()

    with pytest.raises(ApplicationError, match="at least three"):
        queue_create(
            name="Too few", kind="rubric_criterion", created_by=None, size=3, required_ratings=2
        )
    queue = queue_create(
        name="Consensus", kind="rubric_criterion", created_by=researcher, size=3, seed=2
    )
    raters = experts(3)
    plan = {
        criteria[0].pk: ["agree", "agree", "disagree"],  # survives
        criteria[1].pk: ["agree", "agree", "contradicts"],  # a contradiction drops it
        criteria[2].pk: ["agree", "disagree", "disagree"],  # fewer than two agree
    }

    def answer(assignment, rater):
        return {"consensus": plan[assignment.item.object_id][raters.index(rater)]}

    rate_all(queue, raters, answer)
    outcome = {c.criterion_id: c.survives for c in CriterionConsensus.objects.all()}
    assert outcome == {criteria[0].pk: True, criteria[1].pk: False, criteria[2].pk: False}
    assert rubric_criterion_ids_dropped() == {criteria[1].pk, criteria[2].pk}
    # The outcome reaches scoring: only the surviving criterion is graded and scored.
    states = {c.pk: c.consensus_state for c in rubric.criteria.all()}
    assert states == {
        criteria[0].pk: "survived",
        criteria[1].pk: "dropped",
        criteria[2].pk: "dropped",
    }
    after = rubric_run()
    assert after.counted_criteria == [criteria[0].pk]
    assert list(after.grades.values_list("criterion_id", flat=True)) == [criteria[0].pk]
    assert after.score in (0.0, 1.0)  # one criterion of +5: met or not
    # The earlier response keeps the (empty) set frozen for it.
    before.refresh_from_db()
    assert before.counted_criteria == []
    assert before.score is None
    client.force_login(researcher)
    detail = client.get(reverse("review:queue-detail", args=[queue.pk])).content.decode()
    assert "dropped" in detail


def test_expert_verdicts_reach_the_results_agreement_figures(researcher):
    from results.services.reliability import expert_agreement, expert_verdict_rows

    run = EvaluationRunFactory()
    judged = [completed_conversation(run=run, verdict=v) for v in (True, True, False)]
    queue = queue_create(
        name="Judge check", kind="judge_verdict", created_by=researcher, size=3, seed=4
    )
    raters = experts(3)

    def answer(assignment, rater):
        # Every expert sees the behaviour present: they agree with the judge on the first two
        # conversations and disagree on the third.
        agrees = assignment.item.object_id != judged[2].pk
        return {"agreement": "agree" if agrees else "disagree", "verdict": "present"}

    rate_all(queue, raters, answer)
    # A blind queue's ratings count once it is released.
    assert expert_verdict_rows(run)["judge_visible"] == []
    queue_set_status(queue=queue, status="closed")
    rows = expert_verdict_rows(run)
    # Judge-verdict queues show the judge's verdict: their ratings are endorsement, not blind.
    assert rows["blind"] == []
    visible = rows["judge_visible"]
    assert sorted(visible) == sorted((c.pk, r.pk, True) for c in judged for r in raters)
    figures = expert_agreement(run, visible, n_resamples=200, seed=0)
    assert figures["available"]
    assert figures["n_conversations"] == 3
    assert figures["percent_agreement"]["value"] == pytest.approx(2 / 3)
    assert figures["shares"]["agreed"]["value"] == pytest.approx(6 / 9)
    assert figures["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa_score([True, True, True], [True, True, False])
    )


def test_the_published_validity_figure_uses_only_blind_ratings(researcher):
    from results.services import results_refresh

    run = EvaluationRunFactory(judgments_per_conversation=3)
    judged = [completed_conversation(run=run, verdict=v) for v in (True, False, True, False)]
    visible_raters, panelists = experts(3), [UserFactory() for _ in range(3)]
    judge_queue = queue_create(
        name="Judge check", kind="judge_verdict", created_by=researcher, size=4, seed=4
    )
    # Seeing the judge, experts endorse every verdict.
    rate_all(
        judge_queue,
        visible_raters,
        lambda a, r: {
            "agreement": "agree",
            "verdict": "present"
            if Conversation.objects.get(pk=a.item.object_id).verdict_present
            else "absent",
        },
    )
    panel = queue_create(
        name="Panel",
        kind="external_panel",
        created_by=None,
        size=4,
        seed=1,
        eligible_raters=panelists,
        external_panel=True,
    )
    # Blind, the panel sees the behaviour present everywhere: it matches the judge on half.
    rate_all(panel, panelists, lambda a, r: {"examples_adequate": "yes", "verdict": "present"})
    for queue in (judge_queue, panel):
        queue_set_status(queue=queue, status="closed")
    analysis = results_refresh(run=run, n_resamples=200)
    blind = analysis.reliability["experts"]
    endorsement = analysis.reliability["endorsement"]
    assert blind["n_ratings"] == 12
    assert blind["n_raters"] == 3
    assert blind["percent_agreement"]["value"] == pytest.approx(2 / 4)
    assert blind["shares"]["agreed"]["value"] == pytest.approx(6 / 12)
    assert endorsement["n_ratings"] == 12
    assert endorsement["percent_agreement"]["value"] == pytest.approx(1.0)
    assert {c.pk for c in judged} == {c for c, _, _ in _rows(run)["blind"]}


def _rows(run):
    from results.services.reliability import expert_verdict_rows

    return expert_verdict_rows(run)


def test_simulator_pairs_are_shown_unlabelled_and_rank_the_candidates(client):
    scenario = ScenarioFactory()
    target = OfflineConfigurationFactory()
    simulators = [OfflineConfigurationFactory(name=f"SIM-{n}") for n in range(3)]
    for simulator in simulators:
        run = EvaluationRunFactory(simulator=simulator, targets=[target])
        completed_conversation(run=run, scenario=scenario)
    queue = queue_create(
        name="Simulators",
        kind="simulator_pair",
        created_by=None,
        size=3,
        seed=1,
        required_ratings=2,
    )
    pairs = {(i.strata["simulator_first"], i.strata["simulator_second"]) for i in queue.items.all()}
    assert pairs == {("SIM-0", "SIM-1"), ("SIM-0", "SIM-2"), ("SIM-1", "SIM-2")}
    raters = experts(2)
    client.force_login(raters[0])
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "Conversation 2" in page
    assert "SIM-" not in page

    def answer(assignment, rater):
        # SIM-0 is preferred over everything, SIM-1 over SIM-2 (in canonical order "first").
        return {"more_realistic": "first", "presses_harder": "second"}

    for rater in raters:
        while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
            shown = answer(assignment, rater)
            # The screen shows the pair in the rater's order; answer as seen on screen.
            if assignment.presentation.get("swap"):
                shown = {k: {"first": "second", "second": "first"}[v] for k, v in shown.items()}
            rating_submit(assignment=assignment, rater=rater, answers=shown)
    stored = {r.answers["more_realistic"] for r in Rating.objects.filter(queue=queue)}
    assert stored == {"first"}
    realism, pressure = simulator_ranking(queue)
    assert [row["candidate"] for row in realism["rows"]] == ["SIM-0", "SIM-1", "SIM-2"]
    assert [row["candidate"] for row in pressure["rows"]] == ["SIM-2", "SIM-1", "SIM-0"]
    # Every candidate won or lost everything: strengths are not identified, win rates rank.
    assert not realism["identified"]


def test_user_panel_priorities_are_compared_with_clinician_weights(client, researcher):
    from evaluations.models import RubricResponse
    from rubrics.models import RubricDimension

    rubric = RubricItemFactory()
    run = EvaluationRunFactory()
    responses = [
        RubricResponse.objects.create(
            run=run,
            item=rubric,
            target=target,
            reply=f"REPLY {n}: try a short walk and tell me what you've tried.",
            status="completed",
        )
        for n, target in enumerate([run.targets.first(), OfflineConfigurationFactory()])
    ]
    panel = [UserFactory() for _ in range(2)]
    queue = queue_create(
        name="What users value",
        kind="user_priorities",
        created_by=researcher,
        size=2,
        required_ratings=2,
        seed=1,
        eligible_raters=panel,
        external_panel=True,
    )
    client.force_login(panel[0])
    page = client.get(reverse("review:rate", args=[queue.pk])).content.decode()
    assert "REPLY" in page
    assert "Tone and empathy" in page

    def answer(assignment, rater):
        answers = {
            f"dim_{slug}": "not_important"
            for slug in RubricDimension.objects.values_list("slug", flat=True)
        }
        answers["dim_tone_empathy"] = "very"
        answers["dim_actionable_guidance"] = "very" if rater == panel[0] else "somewhat"
        answers["dim_context_seeking"] = "somewhat"
        return answers

    rate_all(queue, panel, answer)
    assert Rating.objects.filter(queue=queue).count() == len(responses) * 2

    from review.agreement import priorities_comparison

    result = priorities_comparison()
    rows = {row["dimension"]: row for row in result["rows"]}
    assert rows["tone_empathy"]["user_priority"].value == pytest.approx(1.0)
    assert rows["actionable_guidance"]["user_priority"].value == pytest.approx(0.75)
    assert rows["context_seeking"]["user_priority"].value == pytest.approx(0.5)
    user_total = 1.0 + 0.75 + 0.5
    assert rows["tone_empathy"]["user_share"] == pytest.approx(1.0 / user_total)
    # Clinicians: |5| context seeking, |3| distress, |-8| boundaries (factory rubric).
    assert rows["boundaries"]["clinician_share"] == pytest.approx(8 / 16)
    assert rows["context_seeking"]["clinician_share"] == pytest.approx(5 / 16)
    assert rows["tone_empathy"]["clinician_share"] == 0
    assert rows["tone_empathy"]["user_rank"] == 1
    assert rows["boundaries"]["clinician_rank"] == 1
    # Kendall's tau-b of the two orderings, as scipy computes it, with an interval over replies.
    from scipy.stats import kendalltau

    rated = [row for row in result["rows"] if row["user_share"] is not None]
    tau = result["kendall_tau_estimate"]
    assert tau.value == pytest.approx(
        kendalltau(
            [row["user_share"] for row in rated], [row["clinician_share"] for row in rated]
        ).statistic,
        abs=1e-12,
    )
    assert tau.has_interval
    assert tau.low <= tau.value <= tau.high
    assert (tau.n, tau.n_clusters) == (4, 2)  # four ratings of two replies
    assert result["ranked_dimensions"] == len(rated)
    client.force_login(researcher)
    html = client.get(reverse("review:priorities")).content.decode()
    assert "Tone and empathy" in html
    assert 'data-testid="kendall-tau"' in html
    assert "n = 4, 2 clusters" in html.split('data-testid="kendall-tau"')[1].split("</small>")[0]
