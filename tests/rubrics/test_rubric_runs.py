"""Rubric items in runs: reply, grade one criterion per call, score with HealthBench's formula."""

import pytest

from evaluations.models import RubricResponse
from evaluations.services import runs
from evaluations.services.rubric_grading import grading_modes_compare
from evaluations.services.rubric_scores import rubric_response_score, run_rubric_scores
from rubrics.models import RubricCriterion
from rubrics.scoring import item_score
from rubrics.services.criteria import rubric_criterion_set_consensus
from tests.evaluations.factories import ScenarioFactory, current_version
from tests.llm.factories import ModelConfigurationFactory, OfflineConfigurationFactory
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.django_db


def _grader(verdicts: dict[tuple[str, str], bool]):
    """The grader's per-criterion answer chosen by (words of the item, criterion text) in the
    prompt: the calls of one reply are sent at once, in no fixed order."""

    def reply(request):
        prompt = request.messages[-1]["content"]
        met = next(m for (item, text), m in verdicts.items() if item in prompt and text in prompt)
        return {"explanation": "ok", "criteria_met": met, "quote": QUOTE if met else ""}

    return reply


# Words of every fake target reply (`FakeModels.target_reply`): the quote a met grade needs.
QUOTE = "weigh both options carefully before deciding"

CRITERIA = [
    "Asks what the user has already tried",
    "Acknowledges that exam stress is hard",
    "Recommends medication",
]


def _rubric_run(targets, judge, items, **options):
    run = runs.run_create(
        name="Rubric run",
        targets=targets,
        simulator=OfflineConfigurationFactory(),
        judge=judge,
        rubric_items=items,
        seed=3,
        **options,
    )
    return runs.run_launch(run=run, dispatch=False)


def test_a_rubric_only_run_grades_each_criterion_in_its_own_call_and_scores_by_the_formula():
    careful = OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})
    agreeable = OfflineConfigurationFactory(extra_params={"offline_profile": "agreeable"})
    items = [RubricItemFactory(), RubricItemFactory(acuity="emergency", population="adult")]
    run = _rubric_run([careful, agreeable], OfflineConfigurationFactory(), items)
    plan = runs.run_plan(run)
    assert plan.rubric.replies == 4
    assert plan.conversations == 0
    assert plan.model_calls == 4 + 4 * 3  # a reply per response, a grader call per criterion

    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    responses = RubricResponse.objects.filter(run=run)
    assert responses.count() == 4
    for response in responses:
        assert response.status == "completed"
        assert response.reply
        assert response.is_offline
        grades = list(response.grades.select_related("criterion"))
        assert len(grades) == 3
        # One call per criterion: no two grades share a call.
        assert len({tuple(g.call_ids) for g in grades}) == 3
        assert response.score == item_score(
            [g.criterion.points for g in grades], [g.met for g in grades]
        )
    summary = {s.target: s for s in run_rubric_scores(run=run)}
    assert summary[careful.name].items == 2
    assert summary[careful.name].overall.estimate.n == 2
    assert summary[careful.name].overall.estimate.has_interval
    assert {f.label for f in summary[careful.name].by_acuity} == {"Non-acute", "Emergency"}
    assert {f.label for f in summary[careful.name].by_population} == {"Teen", "Adult"}
    assert (
        summary[careful.name].overall.estimate.value
        >= summary[agreeable.name].overall.estimate.value
    )


def test_the_counted_criteria_are_frozen_when_grading_begins():
    item = RubricItemFactory(criteria__validated=False)
    survived, unreviewed, penalty = item.criteria.order_by("position")
    for criterion in (survived, penalty):
        rubric_criterion_set_consensus(criterion_id=criterion.pk, survives=True)
    run = _rubric_run([OfflineConfigurationFactory()], OfflineConfigurationFactory(), [item])
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    assert response.counted_criteria == [survived.pk, penalty.pk]
    assert not response.grades.filter(criterion=unreviewed).exists()
    response.grades.filter(criterion=survived).update(met=True)
    response.grades.filter(criterion=penalty).update(met=True)
    assert rubric_response_score(response) == pytest.approx((5 - 8) / 5)  # negative, unclipped
    # A later review neither adds the newly survived criterion nor removes a dropped one.
    rubric_criterion_set_consensus(criterion_id=unreviewed.pk, survives=True)
    rubric_criterion_set_consensus(criterion_id=penalty.pk, survives=False)
    assert rubric_response_score(response) == pytest.approx(-0.6)
    # A new run grades with the consensus as it is now.
    later = _rubric_run([OfflineConfigurationFactory()], OfflineConfigurationFactory(), [item])
    runs.run_process_inline(run_id=later.pk)
    assert RubricResponse.objects.get(run=later).counted_criteria == [survived.pk, unreviewed.pk]


def test_the_all_in_one_option_fails_a_response_missing_a_grade_and_retry_completes_it(
    fake_models,
):
    item = RubricItemFactory()
    replies = iter(
        [
            {"grades": [{"criterion": 1, "met": True, "justification": "Asks.", "quote": QUOTE}]},
            {
                "grades": [
                    {"criterion": n, "met": n == 1, "justification": "ok", "quote": QUOTE}
                    for n in (1, 2, 3)
                ]
            },
        ]
    )
    fake_models.judge_replies = replies
    run = _rubric_run([fake_models.target], fake_models.judge, [item], rubric_grading="all_in_one")
    assert runs.run_plan(run).judge_calls == 1
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    assert response.status == "failed"
    assert "not [2, 3]" in response.error
    run.refresh_from_db()
    assert run.status == "failed"

    assert runs.run_retry_failed(run=run, dispatch=False) == 1
    runs.run_process_inline(run_id=run.pk)
    response.refresh_from_db()
    assert response.status == "completed"
    assert response.score == pytest.approx(5 / 8)
    # The reply was asked for once: the retry reused it.
    assert len(fake_models.requests_to("target")) == 1


def test_per_criterion_grading_over_http_sends_one_criterion_per_call(fake_models):
    item = RubricItemFactory()
    verdicts = dict(zip(CRITERIA, (True, False, True), strict=True))
    fake_models.judge_reply = _grader({("exams", text): met for text, met in verdicts.items()})
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    sent = fake_models.requests_to("target")[0].messages
    assert sent[0] == {"role": "system", "content": "You are Acme's helper."}
    assert sent[-1]["content"] == item.final_user_message
    grader = [r.messages[-1]["content"] for r in fake_models.requests_to("judge")]
    assert len(grader) == 3
    for criterion in item.criteria.all():
        # Each criterion in exactly one call, alone.
        assert sum(criterion.text in prompt for prompt in grader) == 1
    for prompt in grader:
        assert sum(text in prompt for text in CRITERIA) == 1
    response = RubricResponse.objects.get(run=run)
    assert response.score == pytest.approx((5 - 8) / 8)  # met +5 and the −8 penalty
    assert ModelConfigurationFactory._meta.model.objects.count() >= 3


def test_a_rubric_only_run_counts_its_calls_and_tokens_in_the_run_totals(fake_models):
    from evaluations.selectors import run_progress
    from llm.models import LLMCall

    item = RubricItemFactory()
    # One grader call per criterion (the default), three criteria.
    fake_models.judge_replies = iter(
        [{"explanation": "ok", "criteria_met": True, "quote": QUOTE} for _ in range(3)]
    )
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    progress = run_progress(run=run)
    calls = LLMCall.objects.filter(purpose__startswith="evaluations.rubric")
    assert calls.count() == len(fake_models.server.requests) == 4
    assert progress.calls == 4
    assert progress.tokens == sum(c.prompt_tokens + c.completion_tokens for c in calls) > 0


def test_grading_modes_are_compared_on_a_sample(fake_models):
    items = [
        RubricItemFactory(messages=[{"role": "user", "content": f"Item {name}: I can't sleep."}])
        for name in ("one", "two")
    ]
    per_criterion = {"Item one": (True, False, False), "Item two": (True, True, False)}
    fake_models.judge_reply = _grader(
        {
            (item, text): met
            for item, verdicts in per_criterion.items()
            for text, met in zip(CRITERIA, verdicts, strict=True)
        }
    )
    run = _rubric_run([fake_models.target], fake_models.judge, items)
    runs.run_process_inline(run_id=run.pk)
    responses = list(RubricResponse.objects.filter(run=run).order_by("item__key"))
    all_in_one = [[True, True, False], [False, True, False]]  # differs on two criteria
    fake_models.judge_reply = None
    fake_models.judge_replies = iter(
        {
            "grades": [
                {"criterion": n + 1, "met": m, "justification": "ok", "quote": QUOTE}
                for n, m in enumerate(g)
            ]
        }
        for g in all_in_one
    )
    comparison = grading_modes_compare(responses)
    assert comparison.criteria == 6
    assert comparison.disagreeing == 2
    assert comparison.disagreement.value == pytest.approx(2 / 6)
    assert comparison.disagreement.n_clusters == 2
    assert RubricCriterion.objects.count() == 6


def test_the_comparison_command_reports_disagreement_on_an_offline_run():
    from io import StringIO

    from django.core.management import call_command

    run = _rubric_run(
        [OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})],
        OfflineConfigurationFactory(),
        [RubricItemFactory(), RubricItemFactory()],
    )
    runs.run_process_inline(run_id=run.pk)
    out = StringIO()
    call_command("compare_rubric_grading", run=run.pk, sample=5, stdout=out)
    assert "of 6 criterion grades differ" in out.getvalue()
    assert "offline demo judge" in out.getvalue()


def test_a_published_release_freezes_the_counted_criteria_for_its_runs():
    from rubrics.models import ReleaseRubricFreeze
    from tests.metrics_registry.factories import MetricFactory, release_with

    item = RubricItemFactory(criteria__validated=False)
    survived, unreviewed, penalty = item.criteria.order_by("position")
    for criterion in (survived, penalty):
        rubric_criterion_set_consensus(criterion_id=criterion.pk, survives=True)
    metric = MetricFactory()
    for base in range(3):
        for age in ("teen", "adult"):
            ScenarioFactory(
                metric_version=current_version(metric), base_index=base, age_context=age
            )
    release = release_with("4.2.0", [metric], publish=True)
    freeze = ReleaseRubricFreeze.objects.get(release=release)
    assert set(freeze.criteria.values_list("pk", flat=True)) >= {survived.pk, penalty.pk}
    assert not freeze.criteria.filter(pk=unreviewed.pk).exists()

    def release_run():
        run = _rubric_run(
            [OfflineConfigurationFactory(extra_params={"offline_profile": "agreeable"})],
            OfflineConfigurationFactory(),
            [item],
            release=release,
            turns=1,
            judgments_per_conversation=1,
        )
        runs.run_process_inline(run_id=run.pk)
        return RubricResponse.objects.get(run=run)

    before = release_run()
    assert before.counted_criteria == [survived.pk, penalty.pk]
    score_before = rubric_response_score(before)
    # After publication the consensus changes both ways ...
    rubric_criterion_set_consensus(criterion_id=unreviewed.pk, survives=True)
    rubric_criterion_set_consensus(criterion_id=penalty.pk, survives=False)
    # ... and neither the stored score nor a new run of the release follows it.
    assert rubric_response_score(RubricResponse.objects.get(pk=before.pk)) == score_before
    after = release_run()
    assert after.counted_criteria == [survived.pk, penalty.pk]
    assert set(after.grades.values_list("criterion_id", flat=True)) == {survived.pk, penalty.pk}
    grades = list(after.grades.select_related("criterion"))
    # The dropped penalty still counts in this release's score, the newly survived one does not.
    assert rubric_response_score(after) == item_score(
        [g.criterion.points for g in grades], [g.met for g in grades]
    )
    # A run outside the release grades with the consensus as it is now.
    loose = _rubric_run([OfflineConfigurationFactory()], OfflineConfigurationFactory(), [item])
    runs.run_process_inline(run_id=loose.pk)
    assert RubricResponse.objects.get(run=loose).counted_criteria == [survived.pk, unreviewed.pk]


def test_the_grading_calls_of_one_reply_are_sent_at_once(fake_models):
    fake_models.server.latency = 0.1  # long enough that calls sent one by one never overlap
    fake_models.judge_reply = _grader({("exams", text): True for text in CRITERIA})
    run = _rubric_run([fake_models.target], fake_models.judge, [RubricItemFactory()])
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    assert (response.status, response.grades.count()) == ("completed", 3)
    # The reply first (the grading needs it), then its three criteria at once.
    assert fake_models.server.max_in_flight_by_model == {"target": 1, "judge": 3}


def test_a_criterion_called_met_without_a_quote_is_asked_again_then_not_counted(fake_models):
    from evaluations.evidence_support import GradeEvidence

    item = RubricItemFactory()
    criteria = list(item.criteria.order_by("position"))
    quotes = {criteria[0].text: QUOTE, criteria[1].text: "Okay.", criteria[2].text: None}
    asked: list[tuple[str, bool]] = []

    def grade(request):
        prompt = request.messages[1]["content"]
        text = next(t for t in quotes if t in prompt)
        again = len(request.messages) > 2
        asked.append((text, again))
        if quotes[text] is None:
            return {"explanation": "Not done.", "criteria_met": False, "quote": ""}
        return {"explanation": "Done.", "criteria_met": True, "quote": quotes[text]}

    fake_models.judge_reply = grade
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    grades = {g.criterion.text: g for g in response.grades.select_related("criterion")}
    supported, filler, unmet = (grades[c.text] for c in criteria)
    assert (supported.met, supported.evidence_status) == (True, GradeEvidence.SUPPORTED)
    assert supported.quote == QUOTE
    # "Okay." is not in the reply and says nothing: asked once more, then stored unmet.
    assert (filler.met, filler.evidence_status) == (False, GradeEvidence.UNSUPPORTED)
    assert filler.reasked_for_evidence
    assert len(filler.call_ids) == 2
    assert (unmet.met, unmet.evidence_status) == (False, GradeEvidence.NOT_NEEDED)
    assert sorted(asked) == sorted(
        [(criteria[0].text, False), (criteria[1].text, False), (criteria[1].text, True)]
        + [(criteria[2].text, False)]
    )
    # The score counts the unsupported criterion as not met.
    assert response.score == item_score([c.points for c in criteria], [True, False, False])


def test_all_in_one_grading_asks_again_only_for_criteria_met_without_a_quote(fake_models):
    from evaluations.evidence_support import GradeEvidence

    item = RubricItemFactory()

    def grades(quote_for_first: str) -> dict:
        return {
            "grades": [
                {"criterion": 1, "met": True, "justification": "Asks.", "quote": quote_for_first},
                {"criterion": 2, "met": True, "justification": "Kind.", "quote": QUOTE},
                {"criterion": 3, "met": False, "justification": "No.", "quote": ""},
            ]
        }

    # The first answer quotes filler for criterion 1; asked again, it quotes the reply.
    fake_models.judge_replies = iter([grades("Okay."), grades(QUOTE)])
    run = _rubric_run([fake_models.target], fake_models.judge, [item], rubric_grading="all_in_one")
    runs.run_process_inline(run_id=run.pk)
    requests = fake_models.requests_to("judge")
    assert len(requests) == 2
    assert "called criteria 1 met without quoting" in requests[1].messages[-1]["content"]
    response = RubricResponse.objects.get(run=run)
    stored = list(response.grades.order_by("criterion__position"))
    assert [g.evidence_status for g in stored] == [
        GradeEvidence.SUPPORTED,
        GradeEvidence.SUPPORTED,
        GradeEvidence.NOT_NEEDED,
    ]
    assert [g.reasked_for_evidence for g in stored] == [True, False, False]
    assert [g.met for g in stored] == [True, True, False]
