"""A synthetic, full-scale evaluation dataset for load tests and benchmarks -- never real results.

Everything it creates says so: the release title, the run name, "Synthetic model NN" targets,
metric keys starting SYN-, and the credit line. Outcomes come from a logistic model with
effects of model, subarea × polarity, model × subarea, metric difficulty, base scenario and
age context (a few metrics with a strong teen effect), so that the analyses have structure to
find; the three judgments of a conversation mostly agree (a per-metric flip rate).

Planted, so that the expert-facing figures can be checked against the truth (the release notes
say it too): the judge is harsh on the first ``harsh_models`` targets -- it fails a true pass
with probability ``judge_harshness``, the same way in all its readings -- so their judge-only
pass rates are biased low by about ``judge_harshness × true pass rate``. A synthetic expert
gives every conversation its true verdict (`demo.synthetic_verdicts`): a random calibration
sample stratified by target and polarity (so the calibrated pass rates recover the truth) and
the rest (so judge trust has its verdicts). A swap study re-judges a sample of scenarios with
"Synthetic judge B" of known flip probability and harshness (`demo.synthetic_swap`).

This module decides what to create; each app writes its own rows through its bulk services
(`*_bulk_create_synthetic` and friends): ordinary rows, exactly what a real run stores (minus
transcripts), so the aggregation queries meet the same tables at the same scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction

from core.exceptions import ApplicationError
from core.progress import Progress, progress_ignore
from demo.synthetic_swap import synthetic_swap_study_create
from demo.synthetic_verdicts import TrueVerdict, synthetic_blind_verdicts_create
from evaluations.models import AgeContext, EvaluationRun, Scenario, SwapStudy
from evaluations.services.synthetic import (
    SyntheticConversation,
    SyntheticScenario,
    conversations_bulk_create_synthetic,
    run_create_completed_synthetic,
    scenarios_bulk_create_synthetic,
)
from llm.services import configuration_synthetic_get_or_create
from metrics_registry.models import MetricVersion, Release
from metrics_registry.selectors import label_category_list, release_version_exists, subarea_list
from metrics_registry.services import (
    SyntheticMetric,
    benchmark_get_or_create,
    metrics_bulk_create_synthetic,
    release_publish_synthetic,
)
from results.services.expert_figures import release_expert_figures_freeze
from review.models import RatingQueue

SYNTHETIC_MARK = "Synthetic"
BENCHMARK_COUNT = 6
# Conversations written per call (each with its judgments).
BATCH = 5_000
FIRST_NAMES = ("Alex", "Sam", "Jordan", "Priya", "Mateo", "Aisha", "Lena", "Kenji", "Noah", "Zoe")
GENDERS = ("woman", "man", "non-binary")
BACKGROUNDS = (
    "student in a small town",
    "shift worker caring for a parent",
    "recent migrant learning the language",
    "retired teacher",
    "apprentice electrician",
    "freelance designer",
)


@dataclass(frozen=True)
class SyntheticSpec:
    metrics: int = 809
    positive: int = 460
    models: int = 10
    scenarios_per_metric: int = 6
    judgments: int = 3
    seed: int = 0
    release_version: str = ""
    # Planted truth (module doc): the judge's harshness on the first targets, the calibration
    # sample's size, and the swap study's sample and judge B's behaviour (0 scenarios: none).
    judge_harshness: float = 0.2
    harsh_models: int = 1
    calibration_per_target: int = 300
    swap_scenarios: int = 300
    swap_flip: float = 0.08
    swap_harshness: float = 0.1

    @property
    def bases(self) -> int:
        return self.scenarios_per_metric // 2

    def validate(self) -> None:
        if not 0 <= self.positive <= self.metrics or self.metrics < 1:
            raise ApplicationError("--positive must be between 0 and --metrics (at least 1).")
        if self.scenarios_per_metric not in (2, 4, 6):
            raise ApplicationError("--scenarios-per-metric must be 2, 4 or 6 (bases × teen/adult).")
        if not 1 <= self.models <= 99 or not 1 <= self.judgments <= 15:
            raise ApplicationError("--models must be 1..99 and --judgments 1..15.")
        for name in ("judge_harshness", "swap_flip", "swap_harshness"):
            if not 0 <= getattr(self, name) < 1:
                raise ApplicationError(f"--{name.replace('_', '-')} must be in [0, 1).")
        if min(self.harsh_models, self.calibration_per_target, self.swap_scenarios) < 0:
            raise ApplicationError("Counts must not be negative.")
        if self.swap_scenarios == 1:
            raise ApplicationError("A swap study needs at least 2 scenarios (or 0 for none).")

    def planted_notes(self) -> str:
        harsh = f"the first {self.harsh_models} model(s)" if self.harsh_models else "no model"
        text = (
            f"Planted: the judge fails {self.judge_harshness:.0%} of the true passes of {harsh}; "
            "a synthetic expert gives every conversation its true verdict (calibration sample "
            f"of about {self.calibration_per_target} per model, and the rest)."
        )
        if self.swap_scenarios:
            text += (
                f" Swap study: Synthetic judge B re-judges {self.swap_scenarios} scenarios, "
                f"flipping {self.swap_flip:.0%} of verdicts and failing "
                f"{self.swap_harshness:.0%} of the remaining passes."
            )
        return text


@dataclass
class SyntheticResult:
    release: Release
    run: EvaluationRun
    metrics: int
    scenarios: int
    conversations: int
    judgments: int
    # The planted truth: conversation id -> the behaviour is truly present.
    truth: dict[int, bool]
    calibration: RatingQueue | None
    swap_study: SwapStudy | None


def _metrics(
    spec: SyntheticSpec, rng: np.random.Generator
) -> tuple[list[MetricVersion], np.ndarray]:
    """The metrics' current versions, and each one's first subarea (an index, for the outcomes)."""
    subareas = list(subarea_list().order_by("area__position", "position"))
    categories = {
        polarity: list(label_category_list().filter(polarity=polarity))
        for polarity in ("positive", "negative")
    }
    if len(subareas) < 2 or not categories["positive"] or not categories["negative"]:
        raise ApplicationError("The taxonomy is missing; run migrations first.")
    benchmarks = [
        benchmark_get_or_create(
            slug=f"synthetic-benchmark-{i + 1}",
            name=f"Synthetic benchmark {i + 1}",
            description="Synthetic source for load tests.",
        )
        for i in range(BENCHMARK_COUNT)
    ]
    # Sources: 30 % expert submissions, the rest spread unevenly over the benchmarks, so that
    # leaving one benchmark out removes a different share each time.
    source_weights = np.array([0.3, 0.22, 0.16, 0.12, 0.09, 0.06, 0.05])
    source = rng.choice(len(source_weights), size=spec.metrics, p=source_weights)
    polarity = ["positive"] * spec.positive + ["negative"] * (spec.metrics - spec.positive)
    rng.shuffle(polarity)
    # One subarea each, a second one for about a quarter (sometimes in the same area).
    chosen_subareas = []
    for _ in range(spec.metrics):
        first_sub = int(rng.integers(len(subareas)))
        chosen = {first_sub}
        if rng.random() < 0.25:
            chosen.add(int((first_sub + rng.integers(1, len(subareas))) % len(subareas)))
        chosen_subareas.append(sorted(chosen))
    versions = metrics_bulk_create_synthetic(
        metrics=[
            SyntheticMetric(
                name=f"Synthetic metric {i + 1} ({polarity[i]})",
                criterion=f"Synthetic criterion {i + 1}: the assistant shows behaviour #{i + 1}.",
                polarity=polarity[i],
                label_category=categories[polarity[i]][i % len(categories[polarity[i]])],
                subareas=[subareas[s] for s in chosen_subareas[i]],
                benchmark=None if source[i] == 0 else benchmarks[source[i] - 1],
            )
            for i in range(spec.metrics)
        ]
    )
    return versions, np.array([chosen[0] for chosen in chosen_subareas])


def _scenarios(
    spec: SyntheticSpec, versions: list[MetricVersion], rng: np.random.Generator
) -> list[Scenario]:
    scenarios = []
    for i, version in enumerate(versions):
        for base in range(spec.bases):
            for age_context in (AgeContext.TEEN, AgeContext.ADULT):
                age = int(rng.integers(13, 18) if age_context == "teen" else rng.integers(18, 81))
                scenarios.append(
                    SyntheticScenario(
                        metric_version=version,
                        base_index=base,
                        age_context=age_context,
                        base_situation=f"Synthetic situation {base + 1} for metric {i + 1}.",
                        situation=f"Synthetic situation {base + 1} ({age_context}), age {age}.",
                        persona={
                            "name": FIRST_NAMES[int(rng.integers(len(FIRST_NAMES)))],
                            "age": age,
                            "gender": GENDERS[int(rng.integers(len(GENDERS)))],
                            "background": BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))],
                            "other_attributes": {"synthetic": True},
                        },
                    )
                )
    return scenarios_bulk_create_synthetic(scenarios=scenarios)


def _outcomes(
    spec: SyntheticSpec,
    versions: list[MetricVersion],
    first_sub: np.ndarray,
    scenarios: list[Scenario],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judgments `present[scenario, model, repetition]`, the majority verdict per conversation,
    and the true verdict the judge's readings were drawn from (what synthetic experts give)."""
    m = len(versions)
    n_sub = 14
    model_effect = rng.permutation(np.linspace(-0.6, 0.9, spec.models))
    subarea_effect = rng.normal(0.0, 0.6, size=(2, n_sub))
    interaction = rng.normal(0.0, 0.3, size=(spec.models, n_sub))
    difficulty = rng.normal(0.0, 1.0, size=m)
    base_effect = rng.normal(0.0, 0.5, size=(m, spec.bases))
    # Most metrics: teens slightly lower; a tenth with a strong age effect either way.
    teen_effect = np.where(
        rng.random(m) < 0.1, rng.normal(-0.8, 0.6, size=m), rng.normal(-0.1, 0.1, size=m)
    )
    flip_rate = rng.beta(1.0, 16.0, size=m)
    pol = np.array([0 if v.polarity == "positive" else 1 for v in versions])
    polarity_effect = np.where(pol == 0, 0.9, 0.1)
    version_index = {v.pk: i for i, v in enumerate(versions)}
    mi = np.array([version_index[s.metric_version_id] for s in scenarios])
    bi = np.array([s.base_index for s in scenarios])
    teen = np.array([s.age_context == "teen" for s in scenarios])
    logit = (
        (polarity_effect + subarea_effect[pol, first_sub] + difficulty)[mi][:, None]
        + base_effect[mi, bi][:, None]
        + np.where(teen, teen_effect[mi], 0.0)[:, None]
        + model_effect[None, :]
        + interaction[:, first_sub].T[mi]
    )
    passed_true = rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))
    present_true = np.where(pol[mi][:, None] == 0, passed_true, ~passed_true)
    flips = rng.random((*logit.shape, spec.judgments)) < flip_rate[mi][:, None, None]
    # The planted harshness draws from a generator of its own: the other draws stay as they were.
    harsh = np.arange(spec.models) < spec.harsh_models
    missed = np.random.default_rng([spec.seed, 24]).random(logit.shape) < spec.judge_harshness
    # Failing a pass flips the behaviour's presence, whichever the polarity: one systematic
    # error, seen alike by every reading (repetitions do not vote it away).
    perceived = present_true ^ (passed_true & missed & harsh[None, :])
    present = perceived[:, :, None] ^ flips
    votes = present.sum(axis=2)
    verdict_present = votes * 2 > spec.judgments
    # An even number of judgments can tie; the judge's first reading breaks it.
    ties = votes * 2 == spec.judgments
    verdict_present = np.where(ties, present[:, :, 0], verdict_present)
    return present, verdict_present, present_true


def synthetic_dataset_generate(
    *, spec: SyntheticSpec, progress: Progress = progress_ignore
) -> SyntheticResult:
    """Create a published synthetic release and one completed run over it (see module doc).

    `progress` follows the stages "metrics", "scenarios" and "conversations".
    """
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    version = spec.release_version or f"0.0.{900 + spec.seed}"
    if release_version_exists(version):
        raise ApplicationError(f"Release {version} exists already; pass --release-version.")
    with transaction.atomic():
        targets = [
            configuration_synthetic_get_or_create(
                name=f"Synthetic model {i + 1:02d}", model_id=f"synthetic-{i + 1:02d}"
            )
            for i in range(spec.models)
        ]
        judge = configuration_synthetic_get_or_create(
            name="Synthetic judge", model_id="synthetic-judge"
        )
        simulator = configuration_synthetic_get_or_create(
            name="Synthetic simulator", model_id="synthetic-simulator"
        )
        versions, first_sub = _metrics(spec, rng)
        progress(len(versions), spec.metrics, "metrics")
        release = release_publish_synthetic(
            version=version,
            title=f"{SYNTHETIC_MARK} load-test release — not real results",
            notes="Generated by generate_synthetic_dataset for benchmarks and load tests. "
            + spec.planted_notes(),
            versions=versions,
        )
        scenarios = _scenarios(spec, versions, rng)
        progress(len(scenarios), len(scenarios), "scenarios")
    present, verdict_present, present_true = _outcomes(spec, versions, first_sub, scenarios, rng)

    total = len(scenarios) * spec.models
    run = run_create_completed_synthetic(
        name=f"{SYNTHETIC_MARK} run of release {version} (seed {spec.seed})",
        release=release,
        targets=targets,
        simulator=simulator,
        judge=judge,
        judgments=spec.judgments,
        seed=spec.seed,
        conversations=total,
    )
    positive = np.array([s.metric_version.polarity == "positive" for s in scenarios])
    # Written per batch of scenarios: conversations, then their judgments.
    per_batch = max(1, BATCH // spec.models)
    done = 0
    truth: dict[int, bool] = {}
    conversation_cells: dict[int, tuple[int, int]] = {}
    index_of = {
        (sc.pk, target.pk): (i, t)
        for i, sc in enumerate(scenarios)
        for t, target in enumerate(targets)
    }
    for start in range(0, len(scenarios), per_batch):
        chunk = range(start, min(start + per_batch, len(scenarios)))
        conversations = conversations_bulk_create_synthetic(
            run=run,
            judge=judge,
            conversations=[
                SyntheticConversation(
                    scenario_id=scenarios[s].pk,
                    target_id=target.pk,
                    present=present[s, t].tolist(),
                    verdict_present=bool(verdict_present[s, t]),
                    verdict_passed=bool(verdict_present[s, t] == positive[s]),
                )
                for s in chunk
                for t, target in enumerate(targets)
            ],
        )
        for c in conversations:
            i, t = index_of[(c.scenario_id, c.target_id)]
            truth[c.pk] = bool(present_true[i, t])
            conversation_cells[c.pk] = (i, t)
        done += len(conversations)
        progress(done, total, "conversations")
    verdicts = [
        TrueVerdict(
            conversation_id=pk,
            present=truth[pk],
            model=targets[t].name,
            polarity=scenarios[i].metric_version.polarity,
            age_context=scenarios[i].age_context,
            metric_id=scenarios[i].metric_version.metric_id,
        )
        for pk, (i, t) in conversation_cells.items()
    ]
    queues = synthetic_blind_verdicts_create(
        run=run,
        verdicts=verdicts,
        mark=SYNTHETIC_MARK,
        calibration_per_target=spec.calibration_per_target,
        seed=spec.seed,
    )
    swap = None
    if spec.swap_scenarios:
        judge_b = configuration_synthetic_get_or_create(
            name="Synthetic judge B", model_id="synthetic-judge-b"
        )
        swap = synthetic_swap_study_create(
            run=run,
            judge=judge_b,
            scenarios=scenarios,
            targets=targets,
            verdict_present=verdict_present,
            positive=positive,
            size=spec.swap_scenarios,
            flip=spec.swap_flip,
            harshness=spec.swap_harshness,
            judgments=spec.judgments,
            seed=spec.seed,
        )
    # The release is generated whole: its expert figures are frozen once its verdicts exist.
    release_expert_figures_freeze(release=release)
    return SyntheticResult(
        release=release,
        run=run,
        metrics=len(versions),
        scenarios=len(scenarios),
        conversations=total,
        judgments=total * spec.judgments,
        truth=truth,
        calibration=queues.calibration,
        swap_study=swap,
    )
