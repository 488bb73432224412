"""Reading the sampling population of a conversation rating queue, as a ratio to whole rows.

Run against a database that has evaluated conversations, e.g. the demo's:

    IMPACTBENCH_VAR_DIR=var .venv/bin/python benchmarks/queue_sampling.py

Times `adapter.candidates()` for the conversation kind (only the columns sampling needs) and,
as the baseline in the same process, iterating the same conversations as full model instances
with their scenario, metric version, target and run (how sampling read them before). Best of
three runs each.
"""

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")

import django  # noqa: E402

django.setup()

from evaluations.models import Conversation, ConversationStatus  # noqa: E402
from review.kinds import adapter_for  # noqa: E402


def best_of_three(work) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def whole_rows() -> int:
    rows = (
        Conversation.objects.filter(status=ConversationStatus.COMPLETED)
        .select_related("scenario__metric_version__metric", "target", "run__simulator")
        .prefetch_related("scenario__metric_version__subareas")
        .order_by("pk")
    )
    return sum(len(c.scenario.metric_version.subareas.all()) >= 0 for c in rows)


def main() -> None:
    adapter = adapter_for("conversation")
    count = len(list(adapter.candidates()))
    if count == 0:
        # Blind kinds sample only conversations not public yet (an unofficial run, say).
        sys.exit("No completed conversation that is not public yet in this database.")
    sampled = best_of_three(lambda: list(adapter.candidates()))
    baseline = best_of_three(whole_rows)
    print(f"{count} conversations")
    print(f"candidates(): {sampled * 1000:.0f} ms; whole rows: {baseline * 1000:.0f} ms")
    print(f"ratio candidates / whole rows: {sampled / baseline:.3f}")


if __name__ == "__main__":
    main()
