"""The synthetic release's expert-facing figures against the truth planted in it.

One small release (60 metrics, 25 of them positive, 3 models, 1,080 conversations): the judge
is planted harsh on "Synthetic model 01" (it fails 20 % of its true passes), a synthetic expert
gives the true verdict on a stratified calibration sample and on the rest, and "Synthetic judge
B" re-judges a sample of scenarios with a planted flip probability and harshness. The
calibrated rates, judge trust and the swap study's figures are computed by the ordinary
services from the stored rows and compared with figures counted here from the planted truth.
"""

from collections import Counter, defaultdict
from math import sqrt

import numpy as np
import pytest
from django.urls import reverse

from demo.synthetic import SyntheticSpec, synthetic_dataset_generate
from demo.synthetic_swap import planted_flip_share, planted_shift
from evaluations.models import Conversation
from evaluations.services.swap import swap_sample
from results.services import results_refresh
from results.services.calibration import run_calibration
from results.services.judge_trust import run_judge_trust
from results.services.swap_study import swap_study_figures
from review.models import QueueItem, QueuePurpose, QueueStatus, Rating

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

SPEC = SyntheticSpec(
    metrics=60,
    positive=25,
    models=3,
    seed=3,
    release_version="0.0.924",
    calibration_per_target=150,
    swap_scenarios=120,
)
HARSH = "Synthetic model 01"


@pytest.fixture
def synthetic():
    return synthetic_dataset_generate(spec=SPEC)


def _conversations(run) -> list[dict]:
    return list(
        Conversation.objects.filter(run=run).values(
            "pk",
            "scenario_id",
            "target_id",
            "target__name",
            "verdict_passed",
            "scenario__metric_version__polarity",
        )
    )


def _truly_passed(row: dict, truth: dict[int, bool]) -> bool:
    return truth[row["pk"]] == (row["scenario__metric_version__polarity"] == "positive")


@pytest.mark.slow(reason="generates and analyses a synthetic release")
def test_calibration_sample_is_drawn_like_the_real_one_and_rated_with_the_truth(synthetic):
    run, truth = synthetic.run, synthetic.truth
    queue = synthetic.calibration
    assert queue.purpose == QueuePurpose.CALIBRATION
    assert queue.run_id == run.pk
    assert queue.status == QueueStatus.CLOSED
    assert queue.name.startswith("Synthetic")
    assert queue.strata == ["model", "polarity"]
    rows = _conversations(run)
    stratum = {r["pk"]: (r["target__name"], r["scenario__metric_version__polarity"]) for r in rows}
    sizes = Counter(stratum.values())
    items = list(queue.items.values_list("object_id", "inclusion_probability"))
    assert len(items) == 150 * 3
    drawn = Counter(stratum[pk] for pk, _ in items)
    # Proportional allocation within one conversation, and each probability its stratum's
    # drawn share, as review.sampling records it.
    for key, n in sizes.items():
        assert abs(drawn[key] - len(items) * n / len(rows)) < 1, key
    for pk, probability in items:
        assert probability == pytest.approx(drawn[stratum[pk]] / sizes[stratum[pk]])
    # Every conversation of the run is rated exactly once, with its planted true verdict.
    ratings = list(
        Rating.objects.filter(item__object_id__in=[r["pk"] for r in rows]).values_list(
            "item__object_id", "answers", "queue__name"
        )
    )
    assert Counter(pk for pk, _, _ in ratings) == Counter({r["pk"]: 1 for r in rows})
    for pk, answers, queue_name in ratings:
        assert answers["verdict"] == ("present" if truth[pk] else "absent")
        assert answers["synthetic"] is True
        assert queue_name.startswith("Synthetic")
    assert not QueueItem.objects.filter(queue=queue, inclusion_probability__isnull=True).exists()


@pytest.mark.slow(reason="generates and analyses a synthetic release")
def test_calibrated_rates_cover_the_true_rates_and_the_judge_is_biased_where_planted(
    synthetic, client
):
    run, truth = synthetic.run, synthetic.truth
    rows = _conversations(run)
    true_rate: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r in rows:
        passed = _truly_passed(r, truth)
        true_rate[(r["target__name"], "all")].append(passed)
        true_rate[(r["target__name"], r["scenario__metric_version__polarity"])].append(passed)
    calibration = run_calibration(run)
    assert calibration.synthetic
    assert len(calibration.rates) == 3 * 3
    missed = []
    for rate in calibration.rates:
        truth_rate = float(np.mean(true_rate[(rate.target_name, rate.polarity)]))
        if not rate.calibrated.defined:
            # A polarity's share of the sample can fall below the publication minimum.
            assert rate.calibrated.reason.startswith("not enough expert verdicts yet")
            continue
        low, high = rate.calibrated.low, rate.calibrated.high
        if not low <= truth_rate <= high:
            missed.append((rate.target_name, rate.polarity, truth_rate, low, high))
        if rate.polarity != "all":
            continue
        judge_bias = rate.judge_only.value - truth_rate
        assert rate.n_rated == 150
        assert rate.on_label
        if rate.target_name == HARSH:
            # Planted: 20 % of true passes failed. Expected bias -0.2 × truth, give or take
            # three binomial standard errors of the misses and the readings' rare errors.
            planted = -SPEC.judge_harshness * truth_rate
            n = rate.n_judged
            error = 3 * sqrt(SPEC.judge_harshness * 0.8 * truth_rate / n) + 0.02
            assert abs(judge_bias - planted) < error, (judge_bias, planted)
            assert rate.judge_only.high < truth_rate  # the judge alone misses the truth
            assert low <= truth_rate <= high  # the calibration recovers it
            assert abs(rate.calibrated.value - truth_rate) < abs(judge_bias) / 2
        else:
            # Only the readings' symmetric errors, mostly outvoted: no bias to speak of.
            assert abs(judge_bias) < 0.04, (rate.target_name, judge_bias)
    # 95 % intervals over nine cells: at most one may miss (P(two or more) < 0.08 at nominal
    # coverage; the judge-only rate would miss the harsh target's three cells).
    assert len(missed) <= 1, missed
    results_refresh(run=run, n_resamples=50)  # the API shows runs with published results
    data = client.get(reverse("results-api:run-calibration", args=[run.pk])).json()
    assert data["synthetic"] is True
    assert data["expert_rated"] == 450


@pytest.mark.slow(reason="draws a synthetic release's judge-trust figures live: a bootstrap a cell")
def test_judge_trust_counts_every_conversation_once_and_sees_the_planted_harshness(synthetic):
    run, truth = synthetic.run, synthetic.truth
    judge = dict(Conversation.objects.filter(run=run).values_list("pk", "verdict_present"))
    target_of = dict(Conversation.objects.filter(run=run).values_list("pk", "target_id"))
    names = dict(run.targets.values_list("pk", "name"))
    trust = run_judge_trust(run)
    agreement = {}
    for target_id, name in names.items():
        pks = [pk for pk, t in target_of.items() if t == target_id]
        cell = trust["target"][target_id]
        assert cell.synthetic
        assert cell.agreement.n == len(pks)
        assert cell.agreement.value == pytest.approx(
            sum(judge[pk] == truth[pk] for pk in pks) / len(pks)
        )
        assert cell.checked
        agreement[name] = cell.agreement.value
    harsh = agreement.pop(HARSH)
    assert all(value > 0.95 for value in agreement.values()), agreement
    assert harsh < min(agreement.values()) - 0.05


@pytest.mark.slow(reason="generates and analyses a synthetic release")
def test_swap_study_recovers_the_planted_flip_probability_and_shift(synthetic, client):
    run = synthetic.run
    study = synthetic.swap_study
    assert study.base_run_id == run.pk
    assert study.swapped == "judge"
    assert study.rejudged
    assert study.scenario_ids == swap_sample(base_run=run, size=120, seed=SPEC.seed)
    swap_run = study.swap_run
    assert swap_run.synthetic
    assert not swap_run.is_official
    assert swap_run.name.startswith("Synthetic")
    assert swap_run.judge.name == "Synthetic judge B"
    assert swap_run.judge.synthetic
    base = {
        (c["scenario_id"], c["target_id"]): c
        for c in _conversations(run)
        if c["scenario_id"] in set(study.scenario_ids)
    }
    swap = {(c["scenario_id"], c["target_id"]): c for c in _conversations(swap_run)}
    assert set(swap) == set(base)
    # The stored verdict is the majority of judge B's readings.
    assert not Conversation.objects.filter(
        run=swap_run, verdict_present=True, judgments_present__lt=2
    ).exists()
    assert not Conversation.objects.filter(
        run=swap_run, verdict_present=False, judgments_present__gt=1
    ).exists()

    figures = swap_study_figures(study, n_resamples=1000)
    assert figures["synthetic"] is True
    flip, harshness = SPEC.swap_flip, SPEC.swap_harshness
    missed = []
    for polarity, block in figures["polarities"].items():
        keys = [k for k, c in base.items() if c["scenario__metric_version__polarity"] == polarity]
        flipped = [base[k]["verdict_passed"] != swap[k]["verdict_passed"] for k in keys]
        chance = [
            planted_flip_share(
                flip=flip, harshness=harshness, base_pass_rate=base[k]["verdict_passed"]
            )
            for k in keys
        ]
        share = block["flip_share"]
        assert share["value"] == pytest.approx(np.mean(flipped))
        expected = float(np.mean(chance))
        # Within three standard errors of the flips' known chances (the sum of Bernoullis).
        error = sqrt(sum(p * (1 - p) for p in chance)) / len(keys)
        assert abs(share["value"] - expected) < 3 * error, (polarity, share["value"], expected)
        for line in block["models"]:
            mine = [k for k in keys if k[1] == line["target"]]
            base_rate = float(np.mean([base[k]["verdict_passed"] for k in mine]))
            assert line["base_rate"] == pytest.approx(base_rate)
            shift = line["shift"]
            assert shift["value"] == pytest.approx(line["swap_rate"] - base_rate)
            planted = planted_shift(flip=flip, harshness=harshness, base_pass_rate=base_rate)
            if not shift["low"] <= planted <= shift["high"]:
                missed.append((polarity, line["model"], shift, planted))
        assert block["rank_agreement"]["value"] is not None
        assert block["single_vs_majority"]["swap"]["value"] is not None
    # Six 95 % intervals: at most one may miss the planted shift.
    assert len(missed) <= 1, missed
    # Pooled over models and polarities, the mean change of a verdict is the planted one
    # (a base pass: -(flip + (1 - flip) × harshness); a base fail: +flip) within 3 SE.
    change = [swap[k]["verdict_passed"] - base[k]["verdict_passed"] for k in base]
    planted = [
        -(flip + (1 - flip) * harshness) if base[k]["verdict_passed"] else flip for k in base
    ]
    spread = [
        flip + (1 - flip) * harshness - (flip + (1 - flip) * harshness) ** 2
        if base[k]["verdict_passed"]
        else flip * (1 - flip)
        for k in base
    ]
    error = 3 * sqrt(sum(spread)) / len(base)
    assert abs(np.mean(change) - np.mean(planted)) < error, (np.mean(change), np.mean(planted))
    results_refresh(run=run, n_resamples=50)
    data = client.get(reverse("results-api:run-swap-studies", args=[run.pk])).json()
    assert [s["synthetic"] for s in data["studies"]] == [True]
