"""Demo rating queues: one per kind of item, so a reviewer has work on first sign-in.

Idempotent: a queue is identified by its demo name and kind and never recreated or changed; a
kind with nothing to rate yet (no conversations when the demo skips evaluations) is skipped and
seeded on a later start.

Blind kinds (`review.blindness`) rate only conversations not public yet, so their queues are
seeded right after the demo run finishes and before it is made official, from a held-back part
of it: the conversations of a few scenarios, which public pages, the API and downloads leave
out while the queues are open (`evaluations.visibility`). Close a demo queue to publish them.
"""

import random

from django.contrib.auth import get_user_model
from django.utils import translation

from core.demo import DEMO_ACCOUNTS, seeded_panel_email
from core.exceptions import ApplicationError
from core.roles import Role
from core.seed_steps import SeedStep
from evaluations.demo import DEMO_RUN_NAME
from evaluations.models import Conversation, RubricResponse
from rubrics.demo import DEMO_RUBRIC_SOURCE
from rubrics.demo_rubric import demo_panel_answers
from rubrics.dimensions import dimension_choices
from rubrics.models import RubricCriterion

from .blindness import BLIND_KINDS
from .demo_panel import demo_panel_raters
from .demo_realism import demo_realism_panel_seed
from .kinds import Candidate, adapter_for
from .models import ItemKind, RatingQueue
from .services import queue_create
from .services.panel import panel_ratings_record

DEMO_QUEUE_SIZE = 8
DEMO_QUEUE_SEED = 20250102
# How many scenarios the blind queues hold back: all of them sample the same few, so the
# public pages lose as little as possible while the queues are open.
DEMO_HELD_SCENARIOS = 4


def _demo_reviewers() -> list:
    emails = [a.email for a in DEMO_ACCOUNTS if Role.EXPERT_REVIEWER in a.roles]
    return list(get_user_model().objects.filter(email__in=emails))


def demo_queue_name(kind: str) -> str:
    # Stored, and looked up again by name: in English whatever language the request is in.
    with translation.override("en"):
        return f"Demo · {ItemKind(kind).label}"


def _held_back_part() -> dict[str, list[Candidate]]:
    """Each blind kind's candidates narrowed to the conversations of the first few scenarios
    that have a not-yet-public judged conversation: one held-back part for every blind queue."""
    population = {kind: list(adapter_for(kind).candidates()) for kind in BLIND_KINDS}
    ids = {c.object_id for kind in population.values() for c in kind}
    ids |= {c.object_id_b for kind in population.values() for c in kind} - {0}
    conversations = Conversation.objects.filter(pk__in=ids)
    # The demo run's own conversations when it has any to offer (not the anchor study's).
    main = conversations.filter(run__name=DEMO_RUN_NAME)
    scenario_of = dict((main if main.exists() else conversations).values_list("pk", "scenario_id"))
    population = {
        kind: [
            c
            for c in candidates
            if c.object_id in scenario_of and (not c.object_id_b or c.object_id_b in scenario_of)
        ]
        for kind, candidates in population.items()
    }
    judged = {c.object_id for c in population[ItemKind.JUDGE_VERDICT]}
    held = set(sorted({scenario_of[pk] for pk in judged})[:DEMO_HELD_SCENARIOS])
    held = held or set(sorted(set(scenario_of.values()))[:DEMO_HELD_SCENARIOS])
    return {
        kind: [
            c
            for c in candidates
            if scenario_of[c.object_id] in held
            and (not c.object_id_b or scenario_of[c.object_id_b] in held)
        ]
        for kind, candidates in population.items()
    }


def demo_rating_queues_seed(kinds: tuple[str, ...] | None = None) -> str:
    created, kept, empty = [], 0, []
    blind: dict[str, list[Candidate]] | None = None
    for kind in kinds or ItemKind.values:
        name = demo_queue_name(kind)
        if RatingQueue.objects.filter(name=name, kind=kind).exists():
            kept += 1
            continue
        adapter = adapter_for(kind)
        external = adapter.external_raters
        candidates = None
        if adapter.blind:
            blind = _held_back_part() if blind is None else blind
            if not blind[kind]:
                empty.append(kind)
                continue
            candidates = blind[kind]
        try:
            queue = queue_create(
                name=name,
                kind=kind,
                created_by=None,
                size=DEMO_QUEUE_SIZE,
                required_ratings=3,
                seed=DEMO_QUEUE_SEED,
                external_panel=external,
                eligible_raters=_demo_reviewers() if external else (),
                instructions="A demo queue over offline demo content: rate as you would real "
                "items. Other demo raters are not simulated.",
                candidates=candidates,
            )
        except ApplicationError:
            empty.append(kind)
            continue
        if not queue.items.exists():
            queue.delete()  # nothing to rate yet; a later seed tries again
            empty.append(kind)
            continue
        created.append(kind)
    report = f"Demo rating queues: {len(created)} created, {kept} kept"
    return report + (f", nothing to rate yet for {', '.join(empty)}." if empty else ".")


def demo_blind_queues_seed() -> str:
    """The blind kinds' queues, between the demo run finishing and its becoming official."""
    return demo_rating_queues_seed(kinds=BLIND_KINDS)


def demo_seed_steps() -> list[SeedStep]:
    """This app's step of the demo seed (the demo app runs them): after the content
    it samples from, so each kind with something to rate gets a queue; the blind kinds' before
    the demo run is made official (order 80), as they rate only what is not public yet."""
    return [
        SeedStep("consensus", "rubric consensus", demo_rubric_consensus_seed, order=26),
        SeedStep("blind-queues", "blind rating queues", demo_blind_queues_seed, order=75),
        # Blind too, so before the run is made official (80), whose summaries then read it.
        SeedStep("realism-panel", "realism panel", demo_realism_panel_seed, order=77),
        SeedStep("user-panel", "user panel", demo_user_panel_seed, order=85),
        SeedStep("queues", "rating queues", demo_rating_queues_seed, order=90),
    ]


# --- The demo's rubric consensus panel ----------------------------------------------------------

DEMO_PANEL_QUEUE = "Demo · rubric consensus panel (seeded)"


def demo_rubric_consensus_seed() -> str:
    """Pass the demo rubric criteria through expert consensus: a queue over them, rated by a
    seeded panel of three recorded like any panel's (`panel_ratings_record`), so each criterion's
    outcome is recorded by the same rule as a real panel's (>= 3 reviews, >= 2 agree, none
    contradicts). Runs before the demo release is published, which freezes the survivors."""
    if RatingQueue.objects.filter(name=DEMO_PANEL_QUEUE).exists():
        return "Demo rubric consensus: kept."
    planned = demo_panel_answers()
    criteria = RubricCriterion.objects.filter(item__source=DEMO_RUBRIC_SOURCE).select_related(
        "item"
    )
    answers = {c.pk: planned.get((c.item.key, c.position + 1)) for c in criteria}
    candidates = [
        Candidate(object_id=pk, strata={"subarea": "", "age_context": "", "model": ""})
        for pk, planned_answers in sorted(answers.items())
        if planned_answers
    ]
    if not candidates:
        return "Demo rubric consensus: no demo criteria to review."
    raters = demo_panel_raters()
    queue = queue_create(
        name=DEMO_PANEL_QUEUE,
        kind=ItemKind.RUBRIC_CRITERION,
        created_by=None,
        fraction=1.0,
        required_ratings=3,
        seed=DEMO_QUEUE_SEED,
        external_panel=True,
        eligible_raters=raters,
        candidates=candidates,
        instructions="Seeded demo ratings: a simulated panel, not real clinicians.",
    )
    panel_ratings_record(
        queue=queue,
        ratings={
            rater: {pk: {"consensus": three[index]} for pk, three in answers.items() if three}
            for index, rater in enumerate(raters)
        },
    )
    survived = RubricCriterion.objects.filter(pk__in=answers, consensus_state="survived").count()
    return f"Demo rubric consensus: {survived} of {len(answers)} criteria survived."


# --- The demo's user panel ----------------------------------------------------------------------

DEMO_USER_PANEL_QUEUE = "Demo · user panel priorities (seeded)"
DEMO_USER_PANEL_SIZE = 12
DEMO_USER_PANEL_REPLIES = 36
# How likely a demo panel user says a dimension "matters a lot" (else "somewhat" or "doesn't
# matter"): after the companion study MentalHealthBench reports, users weight tone and practical
# next steps more, and gathering context or careful interpretation less, than clinicians do.
DEMO_USER_LEANINGS = {
    "tone_empathy": 0.85,
    "actionable_guidance": 0.8,
    "communication_quality": 0.7,
    "acknowledging_distress": 0.65,
    "user_agency": 0.55,
    "instruction_following": 0.55,
    "safety_escalation": 0.5,
    "accuracy": 0.45,
    "completeness": 0.4,
    "professional_referral": 0.3,
    "boundaries": 0.25,
    "context_awareness": 0.25,
    "no_unsupported_assumptions": 0.15,
    "context_seeking": 0.1,
}


def _demo_user_panel() -> list:
    User = get_user_model()
    users = []
    for number in range(1, DEMO_USER_PANEL_SIZE + 1):
        # Not demo logins: their own domain keeps them apart from the demo accounts.
        email = seeded_panel_email(f"user-{number}")
        user = User.objects.filter(email__iexact=email).first()
        if user is None:
            user = User(username=email, email=email, first_name=f"Demo panel user {number}")
            user.set_unusable_password()
            user.save()
        users.append(user)
    return users


def _importance(rng: random.Random, leaning: float) -> str:
    draw = rng.random()
    if draw < leaning:
        return "very"
    return "somewhat" if draw < leaning + (1 - leaning) / 2 else "not_important"


def demo_user_panel_seed() -> str:
    """A seeded user panel rates what matters to them in replies of the demo run (three users a
    reply), so the public users-versus-clinicians page has figures with their n."""
    if RatingQueue.objects.filter(name=DEMO_USER_PANEL_QUEUE).exists():
        return "Demo user panel: kept."
    responses = (
        RubricResponse.objects.filter(item__source=DEMO_RUBRIC_SOURCE, status="completed")
        .exclude(reply="")
        .select_related("item", "target")
        .order_by("pk")
    )
    candidates = [
        Candidate(
            object_id=r.pk,
            strata={"subarea": "", "age_context": r.item.population, "model": r.target.name},
        )
        for r in responses
    ]
    if not candidates:
        return "Demo user panel: no graded demo replies yet."
    users = _demo_user_panel()
    queue = queue_create(
        name=DEMO_USER_PANEL_QUEUE,
        kind=ItemKind.USER_PRIORITIES,
        created_by=None,
        size=min(DEMO_USER_PANEL_REPLIES, len(candidates)),
        required_ratings=3,
        seed=DEMO_QUEUE_SEED,
        external_panel=True,
        eligible_raters=users,
        candidates=candidates,
        instructions="Seeded demo ratings: a simulated user panel, not real people.",
    )
    rng = random.Random(DEMO_QUEUE_SEED)  # noqa: S311 - reproducible demo answers, not a secret
    ratings: dict = {user: {} for user in users}
    dimensions = [slug for slug, _name in dimension_choices()]
    for index, object_id in enumerate(
        queue.items.order_by("position").values_list("object_id", flat=True)
    ):
        for k in range(3):
            user = users[(3 * index + k) % len(users)]
            ratings[user][object_id] = {
                f"dim_{d}": _importance(rng, DEMO_USER_LEANINGS.get(d, 0.4)) for d in dimensions
            }
    recorded = panel_ratings_record(queue=queue, ratings=ratings)
    return f"Demo user panel: {recorded} ratings by {len(users)} panel users."
