"""The demo's seeded realism panel: experts' realism answers on the demo run's conversations,
so the methodology page can set the fidelity check against them on a fresh demo.

The raters are the demo's simulated panel (`demo_panel`), not clinicians, and their answers are
drawn, not read: each says "realistic" mostly when the offline fidelity check passed the
conversation. The agreement this yields shows the figure working; it says nothing about how
well the check agrees with people, and every place that shows it says so
(`results.services.fidelity_agreement`, marked by the raters' seeded panel domain).

Conversations are a blind kind: the queue is drawn from the demo run before it is made
official, and closed once rated so that its conversations' scenarios are not held off the
public pages (`review.blindness`).
"""

import random
from collections import defaultdict

from evaluations.demo import DEMO_RUN_NAME
from evaluations.models import AnchorCoverage, Conversation

from .demo_panel import demo_panel_raters
from .kinds import Candidate, adapter_for
from .models import ItemKind, QueueStatus, RatingQueue
from .sampling import stratified_sample
from .services import queue_create, queue_set_status
from .services.panel import panel_ratings_record

DEMO_REALISM_QUEUE = "Demo · conversation realism (seeded)"
DEMO_REALISM_SEED = 20250103
# Conversations that met the fidelity bar, drawn at random (by model); every one below the bar
# is added, so the check's both outcomes are rated.
DEMO_REALISM_SAMPLE = 60
DEMO_REALISM_RATINGS = 3
# How likely a simulated rater calls a conversation realistic, by the offline check's outcome:
# each rater draws on their own, so the panel mostly agrees with the check, not always (a
# split panel or a majority against the check happens, as with people).
DEMO_REALISTIC_IF_MET = 0.9
DEMO_REALISTIC_IF_BELOW = 0.25
# The pressure question has no check to follow: a plausible spread, most conversations pressing.
DEMO_PRESSURE_WEIGHTS = {"none": 1, "mild": 3, "significant": 4, "extreme": 2}
DEMO_REALISM_INSTRUCTIONS = (
    "Seeded demo ratings: a simulated panel, not real clinicians; each simulated rater mostly "
    "agrees with the offline fidelity check (says realistic with probability "
    f"{DEMO_REALISTIC_IF_MET:.0%} when the conversation met the fidelity bar, "
    f"{DEMO_REALISTIC_IF_BELOW:.0%} when it did not). The sample: {DEMO_REALISM_SAMPLE} "
    "conversations that met the bar, drawn at random by model, and every one below it."
)


def _realism_sample(passed: dict[int, bool]) -> list[Candidate]:
    """Below-bar conversations first, then a seeded stratified draw of those meeting the bar,
    among the conversations the kind may rate blind (not public yet)."""
    rateable = adapter_for(ItemKind.CONVERSATION).candidates()
    population = [c for c in rateable if c.object_id in passed]
    below = [c for c in population if not passed[c.object_id]]
    met = [c for c in population if passed[c.object_id]]
    drawn = (
        stratified_sample(
            met, strata=["model"], size=min(DEMO_REALISM_SAMPLE, len(met)), seed=DEMO_REALISM_SEED
        )
        if met
        else []
    )
    return below + drawn


def _anchor_answers(conversation_ids: list[int]) -> dict[int, dict[str, str]]:
    """Each conversation's anchor questions answered as the anchor checker read them: the
    simulated raters add no opinion of their own there."""
    answers: dict[int, dict[str, str]] = defaultdict(dict)
    for conversation_id, index, raised in AnchorCoverage.objects.filter(
        conversation_id__in=conversation_ids
    ).values_list("conversation_id", "anchor_index", "raised"):
        # Coverage counts anchors from 0, the rating form from 1 (`anchor_question`).
        answers[conversation_id][f"anchor_{index + 1}"] = "yes" if raised else "no"
    return answers


def demo_realism_panel_seed() -> str:
    """A queue over a sample of the demo run's checked conversations, rated three times each by
    the demo's simulated panel, recorded like any panel's ratings (`panel_ratings_record`).
    Kept when it exists; skipped while the demo run has no checked conversation not public."""
    if RatingQueue.objects.filter(name=DEMO_REALISM_QUEUE, kind=ItemKind.CONVERSATION).exists():
        return "Demo realism panel: kept."
    passed = dict(
        Conversation.objects.filter(run__name=DEMO_RUN_NAME, fidelity__isnull=False).values_list(
            "pk", "fidelity__passed"
        )
    )
    candidates = _realism_sample(passed)
    if not candidates:
        return "Demo realism panel: skipped (no checked demo conversation that is not public yet)."
    raters = demo_panel_raters()
    queue = queue_create(
        name=DEMO_REALISM_QUEUE,
        kind=ItemKind.CONVERSATION,
        created_by=None,
        # Chosen on purpose (every below-bar conversation), so stored without probabilities.
        size=len(candidates),
        ranked=True,
        required_ratings=DEMO_REALISM_RATINGS,
        seed=DEMO_REALISM_SEED,
        external_panel=True,
        eligible_raters=raters,
        candidates=candidates,
        instructions=DEMO_REALISM_INSTRUCTIONS,
    )
    adapter = adapter_for(ItemKind.CONVERSATION)
    items = list(queue.items.order_by("position"))
    anchors = _anchor_answers([item.object_id for item in items])
    rng = random.Random(DEMO_REALISM_SEED)  # noqa: S311 - reproducible demo answers, not a secret
    ratings: dict = {rater: {} for rater in raters}
    for item in items:
        chance = DEMO_REALISTIC_IF_MET if passed[item.object_id] else DEMO_REALISTIC_IF_BELOW
        # Anchor questions the checker did not read (none stored) are answered "no": the
        # rater could not find the point raised.
        anchor_answers = {
            q.name: anchors[item.object_id].get(q.name, "no")
            for q in adapter.questions(item)
            if q.name.startswith("anchor_")
        }
        for rater in raters:
            ratings[rater][item.object_id] = {
                "realistic": "yes" if rng.random() < chance else "no",
                "pressure": rng.choices(
                    list(DEMO_PRESSURE_WEIGHTS), weights=list(DEMO_PRESSURE_WEIGHTS.values())
                )[0],
                **anchor_answers,
            }
    recorded = panel_ratings_record(queue=queue, ratings=ratings)
    # Every item is complete: closing releases the blind hold on their scenarios.
    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    below = sum(1 for item in items if not passed[item.object_id])
    return (
        f"Demo realism panel: {recorded} seeded ratings of {len(items)} conversations "
        f"({below} below the fidelity bar) by {len(raters)} simulated raters."
    )
