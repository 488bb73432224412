"""Demo rating queues: one per kind of item, so a reviewer has work on first sign-in.

Idempotent: a queue is identified by its demo name and kind and never recreated or changed; a
kind with nothing to rate yet (no conversations when the demo skips evaluations) is skipped and
seeded on a later start.
"""

from django.contrib.auth import get_user_model

from core.demo import DEMO_ACCOUNTS
from core.exceptions import ApplicationError
from core.roles import Role, user_add_roles
from core.seed_steps import SeedStep
from rubrics.demo import DEMO_RUBRIC_SOURCE
from rubrics.demo_rubric import demo_panel_answers
from rubrics.models import RubricCriterion

from .kinds import Candidate
from .models import ItemKind, RatingQueue
from .services import queue_create
from .services.panel import panel_ratings_record

DEMO_QUEUE_SIZE = 8
DEMO_QUEUE_SEED = 20250102


def _demo_reviewers() -> list:
    emails = [a.email for a in DEMO_ACCOUNTS if Role.EXPERT_REVIEWER in a.roles]
    return list(get_user_model().objects.filter(email__in=emails))


def demo_queue_name(kind: str) -> str:
    return f"Demo · {ItemKind(kind).label}"


def demo_rating_queues_seed() -> str:
    created, kept, empty = [], 0, []
    for kind in ItemKind.values:
        name = demo_queue_name(kind)
        if RatingQueue.objects.filter(name=name, kind=kind).exists():
            kept += 1
            continue
        external = kind == ItemKind.EXTERNAL_PANEL
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


def demo_seed_steps() -> list[SeedStep]:
    """This app's step of the demo seed (answers `events.DEMO_SEED_STEPS`): after the content
    it samples from, so each kind with something to rate gets a queue."""
    return [
        SeedStep("consensus", "rubric consensus", demo_rubric_consensus_seed, order=26),
        SeedStep("queues", "rating queues", demo_rating_queues_seed, order=90),
    ]


# --- The demo's rubric consensus panel ----------------------------------------------------------

DEMO_PANEL_QUEUE = "Demo · rubric consensus panel (seeded)"
DEMO_PANEL = [
    ("panel-1@demo.impactbench.org", "Demo panel clinician 1"),
    ("panel-2@demo.impactbench.org", "Demo panel clinician 2"),
    ("panel-3@demo.impactbench.org", "Demo panel clinician 3"),
]


def _demo_panel_raters() -> list:
    """Three reviewers the consensus rule needs; they cannot sign in (no usable password)."""
    User = get_user_model()
    raters = []
    for email, name in DEMO_PANEL:
        user = User.objects.filter(email__iexact=email).first()
        if user is None:
            user = User(username=email, email=email, first_name=name)
            user.set_unusable_password()
            user.save()
        user_add_roles(user, (Role.EXPERT_REVIEWER,))
        raters.append(user)
    return raters


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
    raters = _demo_panel_raters()
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
