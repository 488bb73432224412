"""A panel of judges: several judge configurations read each conversation; the verdict is the
majority of the judges' own majorities, an even split reported as a tie."""

import io
import json

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command

from evaluations.models import Conversation, EvaluationRun, Judgment, RunJudge
from evaluations.services.panel import Seat, panel_verdict
from evaluations.services.run_exports import run_export_jsonl_lines
from evaluations.services.runs import run_plan
from results.services.panel import panel_readings
from results.services.refresh import results_refresh
from tests.evaluations.test_runs import offline_release  # noqa: F401 - fixture
from tests.fake_openai import is_check
from tests.llm.factories import OfflineConfigurationFactory

pytestmark = pytest.mark.django_db

PROFILES = ("lenient", "strict", "noisy")


@pytest.fixture
def offline_panel():
    OfflineConfigurationFactory(name="Sim")
    OfflineConfigurationFactory(name="Careful", extra_params={"offline_profile": "careful"})
    OfflineConfigurationFactory(name="Agreeable", extra_params={"offline_profile": "agreeable"})
    return [
        OfflineConfigurationFactory(name=f"Offline judge: {p}", extra_params={"offline_profile": p})
        for p in PROFILES
    ]


def _panel_run(judges: str, judgments: int = 3) -> EvaluationRun:
    call_command(
        "run_evaluation",
        "--release=1.0.0",
        "--targets=Careful,Agreeable",
        "--simulator=Sim",
        f"--judges={judges}",
        "--turns=2",
        f"--judgments={judgments}",
        "--seed=7",
        "--yes",
        "--inline",
        stdout=io.StringIO(),
    )
    return EvaluationRun.objects.get()


@pytest.mark.slow(reason="a whole offline run judged by a panel of three, each reading twice")
def test_a_three_judge_offline_run_completes_with_each_judge_s_readings(
    offline_release,  # noqa: F811
    offline_panel,
):
    names = ",".join(j.name for j in offline_panel)
    run = _panel_run(names)
    assert run.status == "completed"
    assert run.judge == offline_panel[0]
    assert list(RunJudge.objects.filter(run=run).values_list("judge__name", "repetitions")) == [
        ("Offline judge: strict", 3),
        ("Offline judge: noisy", 3),
    ]
    assert run.conversations_completed == 24
    plan = run_plan(run)
    assert plan.judge_calls == 24 * (9 + 2)  # + an anchor and a fidelity check each
    for conversation in Conversation.objects.filter(run=run):
        readings = list(conversation.judgments.order_by("repetition"))
        assert [j.judge.name for j in readings] == [n for n in names.split(",") for _ in range(3)]
        assert all(j.is_offline for j in readings)
        # Three judges never tie; the verdict is the majority of the judges' majorities.
        own = [sum(j.present for j in readings[i : i + 3]) >= 2 for i in (0, 3, 6)]
        assert conversation.panel_tie is False
        assert conversation.verdict_present == (sum(own) >= 2)
    # The profiles differ: the lenient judge passes more than the strict one.
    passes = {}
    for judge in offline_panel:
        rows = Judgment.objects.filter(conversation__run=run, judge=judge)
        polarity_pass = sum(
            (
                j.present
                if j.conversation.scenario.metric_version.polarity == "positive"
                else not j.present
            )
            for j in rows.select_related("conversation__scenario__metric_version")
        )
        passes[judge.offline_profile] = polarity_pass / rows.count()
    assert passes["lenient"] > passes["strict"], passes
    _published_figures(run, offline_panel)
    _published_pages(run, offline_panel)


def test_two_judges_that_disagree_leave_a_tie_without_a_verdict():
    seats = [Seat(0, None, 3, 0), Seat(1, None, 1, 3)]
    tied = panel_verdict(seats, {0: True, 1: True, 2: False, 3: False})
    assert (tied.present, tied.tie, tied.judges) == (None, True, [True, False])
    agreed = panel_verdict(seats, {0: True, 1: False, 2: False, 3: False})
    assert (agreed.present, agreed.tie) == (False, False)
    single = panel_verdict(seats[:1], {0: True, 1: False, 2: True})
    assert (single.present, single.tie, single.judges) == (True, False, [True])


@pytest.mark.slow(reason="a whole offline run judged by a panel of two")
def test_an_even_offline_panel_s_verdicts_follow_the_majority_rule_from_the_readings(
    offline_release,  # noqa: F811
    offline_panel,
):
    """The verdicts the pipeline stores, against the rule counted by hand from each judge's
    readings: a judge's majority, then the judges' majority, an even split a tie."""
    lenient, strict, _noisy = offline_panel
    run = _panel_run(f"{lenient.name},{strict.name}", judgments=3)
    assert run.status == "completed"
    ties = 0
    for conversation in Conversation.objects.filter(run=run):
        own = {}
        for judgment in conversation.judgments.select_related("judge"):
            own.setdefault(judgment.judge_id, []).append(judgment.present)
        votes = [sum(readings) * 2 > len(readings) for readings in own.values()]
        tie = votes.count(True) == votes.count(False)
        ties += tie
        expected = None if tie else votes.count(True) > votes.count(False)
        assert (conversation.verdict_present, conversation.panel_tie) == (expected, tie)
    assert ties > 0  # the lenient and the strict judge split somewhere
    analysis = results_refresh(run=run, n_resamples=50)
    assert analysis.reliability["panel"]["ties"] == ties


def _published_figures(run, offline_panel):
    """The panel's agreement and each judge's rates, as the run analysis publishes them."""
    analysis = results_refresh(run=run, n_resamples=200)
    panel = analysis.reliability["panel"]
    assert panel["available"] is True
    assert [j["name"] for j in panel["judges"]] == [j.name for j in offline_panel]
    assert panel["n_conversations"] == 24
    assert panel["ties"] == 0
    # Alpha over the judges' own verdicts (the majority of each one's readings), as the
    # reference package computes it on the same data.
    data = panel_readings(run)
    readings = data["readings"]
    verdicts = (np.nansum(readings, axis=2) * 2 > 3).astype(float)
    expected = krippendorff.alpha(reliability_data=verdicts.T, level_of_measurement="nominal")
    for level in ("binary", "ordinal"):
        figure = panel["overall"][level]
        assert figure["value"] == pytest.approx(expected, abs=1e-9)
        assert figure["n"] == 24
        assert figure["n_clusters"] == 6  # 2 metrics × 3 base scenarios
        assert figure["low"] <= figure["value"] <= figure["high"]
    assert [m["n_conversations"] for m in panel["per_metric"]] == [12, 12]
    versions = data["version"]
    for metric in panel["per_metric"]:
        mine = verdicts[versions == metric["metric_version"]]
        reference = krippendorff.alpha(reliability_data=mine.T, level_of_measurement="ordinal")
        assert metric["ordinal"]["value"] == pytest.approx(reference, abs=1e-9)
        assert metric["ordinal"]["low"] is None  # three base scenarios: no interval
        assert metric["ordinal"]["n"] == 12
    assert all(m["binary"]["n_clusters"] == 3 for m in panel["per_metric"])
    # Each judge on each target, beside its paired gap to the panel.
    rates = {(r["judge"], r["target_name"]): r for r in panel["judge_rates"]}
    assert len(rates) == 6
    lenient = rates[("Offline judge: lenient", "Careful")]
    strict = rates[("Offline judge: strict", "Careful")]
    assert lenient["pass_rate"]["n"] == 12
    assert lenient["minus_panel"]["value"] >= strict["minus_panel"]["value"]
    assert {r["target_name"] for r in panel["panel_rates"]} == {"Careful", "Agreeable"}
    # Repeatability stays the first judge's repetitions.
    assert analysis.reliability["judge"]["judgments_per_conversation"] == 3
    assert analysis.reliability["judge"]["n_conversations"] == 24


def _published_pages(run, offline_panel):
    """The conversation page, the methodology page and the API show the panel."""
    from django.test import Client
    from django.urls import reverse

    from evaluations.services.official import run_set_official

    run_set_official(run=run, official=True, changed_by=None)
    client = Client()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    page = client.get(reverse("results:conversation", kwargs={"pk": conversation.pk}))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('data-testid="panel-judge"') == 3
    assert html.count('data-testid="judgment"') == 9
    for judge in offline_panel:
        assert f"Reading 3 by {judge.name}" in html
    assert "offline demo model" in html
    assert "majority of 3 judges" in html

    methodology = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="judge-panel"' in methodology
    assert 'data-testid="panel-alpha-binary"' in methodology
    assert "Offline judge: strict" in methodology

    api = client.get(reverse("results-api:run-judges", kwargs={"pk": run.pk})).json()
    assert api["available"] is True
    assert [j["name"] for j in api["judges"]] == [j.name for j in offline_panel]
    assert api["overall"]["binary"]["n"] == 24
    assert len(api["judge_rates"]) == 6
    # Each judge's share of readings whose quotes support its verdict, on the page and in the API.
    assert 'data-testid="evidence-support"' in methodology
    support = {j["judge"]: j for j in api["evidence_support"]}
    assert list(support) == [j.name for j in offline_panel]
    for figure in support.values():
        assert figure["readings"] == 24 * 3
        assert sum(s["count"] for s in figure["by_status"]) == 24 * 3
        assert figure["supported"]["n"] == 24 * 3  # nothing stored before the check
        assert figure["supported"]["low"] <= figure["supported"]["value"]
    detail = client.get(reverse("results-api:conversation", kwargs={"pk": conversation.pk}))
    names = [j["judge"] for j in detail.json()["judgments"]]
    assert names == [j.name for j in offline_panel for _ in range(3)]


def _fake_panel(fake_models, replies: dict[str, bool], *, conversations: int = 4):
    """A running run on the fake OpenAI-compatible server whose judges (model ids, in order;
    "judge" is the run's own) always find the behaviour present or absent."""
    from tests.evaluations.factories import running_run
    from tests.fake_openai import judge_reply
    from tests.llm.factories import ModelConfigurationFactory

    own = fake_models.judge
    fields = {"base_url": own.base_url, "provider": own.provider, "api_key_env": own.api_key_env}
    others = [ModelConfigurationFactory(model_id=m, **fields) for m in list(replies)[1:]]
    plain = fake_models.respond

    def respond(request):
        if request.model in replies and not is_check(request):
            present = replies[request.model]
            reading = judge_reply(request.messages[1]["content"])
            label = "behaviour_shown" if present else "behaviour_missing"
            return {
                "present": present,
                "justification": f"{request.model} read it.",
                "evidence": [{**quote, "shows": label} for quote in reading["evidence"]],
            }
        return plain(request)  # the simulator, the target and the run judge's checks

    fake_models.server.responder = respond
    run = running_run(fake_models, conversations=conversations, judgments=3, scenario_each=True)
    for position, judge in enumerate(others, start=1):
        RunJudge.objects.create(run=run, position=position, judge=judge, repetitions=3)
    return run


@pytest.mark.slow(reason="a whole run judged by three judges over HTTP")
def test_a_three_judge_run_completes_on_the_test_server(provider_models):
    """On each provider's local test server (OpenAI-compatible, Anthropic, Gemini)."""
    from evaluations.engine import process_conversations

    fake_models = provider_models
    run = _fake_panel(fake_models, {"judge": True, "judge-b": False, "judge-c": True})
    ids = list(Conversation.objects.filter(run=run).values_list("pk", flat=True))
    report = process_conversations(ids, inline=True)
    assert report.completed == 4
    # Each judge read each conversation three times, through the provider's own client.
    judge_calls = [r for r in fake_models.server.requests if r.model.startswith("judge")]
    by_model = {m: sum(r.model == m for r in judge_calls) for m in ("judge-b", "judge-c")}
    assert by_model == {"judge-b": 12, "judge-c": 12}
    for conversation in Conversation.objects.filter(run=run):
        readings = list(conversation.judgments.order_by("repetition").select_related("judge"))
        assert [j.judge.model_id for j in readings] == ["judge"] * 3 + ["judge-b"] * 3 + [
            "judge-c"
        ] * 3
        assert (conversation.verdict_present, conversation.panel_tie) == (True, False)
        assert conversation.judgments_present == 6
    panel = results_refresh(run=run, n_resamples=200).reliability["panel"]
    assert panel["n_conversations"] == 4
    assert panel["ties"] == 0
    rates = {r["position"]: r for r in panel["judge_rates"]}
    # The judge that always says absent passes nothing on a positive metric; the others all.
    assert rates[1]["pass_rate"]["value"] == 0.0
    assert rates[0]["pass_rate"]["value"] == rates[2]["pass_rate"]["value"] == 1.0
    assert rates[1]["minus_panel"]["value"] == -1.0
    assert panel["panel_rates"][0]["pass_rate"]["value"] == 1.0


def test_an_even_panel_that_splits_is_a_tie_left_out_of_the_pass_rates(fake_models):
    from evaluations.engine import process_conversations
    from results.services.cells import JUDGES_TIED, run_cells

    run = _fake_panel(fake_models, {"judge": True, "judge-b": False})
    ids = list(Conversation.objects.filter(run=run).values_list("pk", flat=True))
    assert process_conversations(ids, inline=True).completed == 4
    for conversation in Conversation.objects.filter(run=run):
        assert conversation.status == "completed"
        assert conversation.panel_tie is True
        assert conversation.verdict_present is None
        assert conversation.verdict_passed is None
    run.refresh_from_db()
    assert run.conversations_completed == 4
    lines = [json.loads(line) for line in run_export_jsonl_lines(run)]
    further = lines[0]["models"]["further_judges"]
    assert [(j["model_id"], j["readings"]) for j in further] == [("judge-b", 3)]
    assert all(line["judges_tied"] for line in lines[1:5])
    cells = run_cells(run)
    assert cells.size == 0  # no conversation has a verdict, none is counted as pass or fail
    assert sum(row[5] for row in cells.failed if row[4] == JUDGES_TIED) == 4
    analysis = results_refresh(run=run, n_resamples=200)
    assert analysis.reliability["panel"]["ties"] == 4


def test_a_further_judge_that_keeps_failing_halts_the_run_like_the_judge():
    from evaluations.services.health import configuration_pause
    from tests.evaluations.factories import EvaluationRunFactory

    run = EvaluationRunFactory(status="running")
    further = OfflineConfigurationFactory(name="Second judge")
    RunJudge.objects.create(run=run, position=1, judge=further, repetitions=1)
    configuration_pause(run_id=run.pk, configuration_id=further.pk, reason="all calls failed")
    run.refresh_from_db()
    assert run.status == "paused"
    assert run.paused_configurations == {}  # not taken for a target
    assert "Second judge paused" in run.halt_reason
