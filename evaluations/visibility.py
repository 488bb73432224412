"""Which conversations and scenarios visitors may read: the one gate every public path uses.

A conversation is public when its run is (official, completed, of a published release) and it
is not held back for blind review. Every public page, API answer, export and download that
shows transcripts or scenario text selects through here: the results pages and API
(`results.selectors.public_conversations`), a run's JSONL export and a release's Inspect AI
dataset.

Why hold back, and why whole scenarios. Expert ratings that must be blind (the judge-verdict
check, the external panel, realism and simulator comparisons) are only worth something if the
rater cannot look the rated conversation up and read the model's name and the judge's verdict.
So items of those queues are drawn from conversations not yet public, and while their queue is
open (or a claim on them is still outstanding) they stay out of every public path. The hold
covers the item's whole scenario, in every run: the persona and situation would otherwise find
the scenario's other conversations, and the one model missing from that list would name the
rated one by elimination. Published figures still count held conversations (they are part of
the run's pass rates, intervals and n); only the transcripts and scenario text wait. When the
queue closes, everything it held is public again with no step to forget.

The review app owns queues, so it answers which scenarios are held through the
``BLIND_HOLDS`` event (``core.events``); this module never imports it.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from core import events
from metrics_registry.models import ReleaseStatus

from .models import Conversation, EvaluationRun, RunStatus, Scenario


def runs_public() -> QuerySet[EvaluationRun]:
    """Runs whose transcripts visitors may read: official, completed, of a published release.

    (`results.selectors.public_runs` narrows these to runs whose summaries exist, for pages.)
    """
    return EvaluationRun.objects.filter(
        is_official=True, status=RunStatus.COMPLETED, release__status=ReleaseStatus.PUBLISHED
    )


def held_scenario_filter() -> Q:
    """Scenarios held back for blind review, as a filter on `Scenario` rows (subqueries only,
    no query runs here); an empty filter matches nothing."""
    held = Q(pk__in=[])
    for subquery in events.collect(events.BLIND_HOLDS):
        held |= Q(pk__in=subquery)
    return held


def scenarios_public(scenarios: QuerySet[Scenario] | None = None) -> QuerySet[Scenario]:
    """`scenarios` (default: all) without those held back for blind review."""
    scenarios = Scenario.objects.all() if scenarios is None else scenarios
    return scenarios.exclude(held_scenario_filter())


def conversations_visible(conversations: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """`conversations` without those whose scenario is held back for blind review."""
    return conversations.exclude(scenario__in=Scenario.objects.filter(held_scenario_filter()))


def conversations_public() -> QuerySet[Conversation]:
    """Every conversation a visitor may read, through any page, API answer or download."""
    return conversations_visible(Conversation.objects.filter(run__in=runs_public()))


def run_is_public(run: EvaluationRun) -> bool:
    return runs_public().filter(pk=run.pk).exists()
