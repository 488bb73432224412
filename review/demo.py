"""Demo rating queues: one per kind of item, so a reviewer has work on first sign-in.

Idempotent: a queue is identified by its demo name and kind and never recreated or changed; a
kind with nothing to rate yet (no conversations when the demo skips evaluations) is skipped and
seeded on a later start.
"""

from django.contrib.auth import get_user_model

from core.demo import DEMO_ACCOUNTS
from core.exceptions import ApplicationError
from core.roles import Role
from core.seed_steps import SeedStep

from .models import ItemKind, RatingQueue
from .services import queue_create

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
    return [SeedStep("queues", "rating queues", demo_rating_queues_seed, order=90)]
