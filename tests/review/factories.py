"""Review fixtures built through the services, so tests exercise the real paths."""

from review.kinds import Candidate
from review.services import queue_create
from tests.factories import UserFactory


def synthetic_candidates(n: int, *, owner_id: int | None = None) -> list[Candidate]:
    """Metric-kind candidates without metric rows: for assignment tests that need many items."""
    subareas = ("agency-purpose", "physical-health", "law")
    return [
        Candidate(
            object_id=i + 1,
            strata={"subarea": subareas[i % 3], "age_context": ("teen", "adult")[i % 2]},
            owner_id=owner_id,
        )
        for i in range(n)
    ]


def metric_queue(*, n: int = 5, required: int = 3, candidates=None, **kwargs):
    kwargs.setdefault("created_by", UserFactory())
    return queue_create(
        name=kwargs.pop("name", "Fidelity check"),
        kind="metric",
        size=n,
        required_ratings=required,
        seed=kwargs.pop("seed", 7),
        candidates=candidates,
        **kwargs,
    )
