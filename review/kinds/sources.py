"""What a rater's questions refer to, read for the screen: a metric's source (the submission or
benchmark it was drafted from) and its examples, and a transcript with the judge's quotes marked.

Nothing here names a model: sources and examples are about the metric, never about who answered.
"""

from dataclasses import dataclass

from django.utils.translation import gettext as _

from evaluations.evidence import Piece
from evaluations.models import Turn
from metrics_registry.models import Metric, MetricVersion
from submissions.models import Submission


@dataclass(frozen=True)
class MarkedTurn:
    turn: Turn
    user: list[Piece]
    assistant: list[Piece]


@dataclass(frozen=True)
class Example:
    kind: str  # "supportive" or "harmful": what the contributor's example shows
    text: str
    source: str


def metric_source_submissions(metric: Metric) -> list[Submission]:
    """The construct submissions a metric was accepted from (usually one)."""
    return [
        candidate.submission
        for candidate in metric.source_candidates.select_related("submission").order_by("pk")
    ]


def metric_first_version(
    metric: Metric, *, submissions: list[Submission] | None = None
) -> MetricVersion | None:
    """The version as first recorded from its source: when the metric has changed since, or
    when that record is the only text of its source there is (an imported benchmark item: the
    benchmark's description and the item's reference alone give a rater nothing to compare
    the criterion with). A metric drafted from a contribution at its first version has the
    contribution itself to compare with."""
    if metric.current_version is None:
        return None
    if metric.current_version.number == 1:
        if submissions is None:
            submissions = metric_source_submissions(metric)
        return None if submissions else metric.current_version
    return metric.versions.filter(number=1).first()


def metric_examples(metric: Metric) -> list[Example]:
    """The examples a metric came with: its contributors' supportive and harmful examples."""
    examples = []
    for submission in metric_source_submissions(metric):
        # Read on the rater's screen, so in their language (built per request).
        source = _("From the contribution “%(title)s”") % {"title": submission.title}
        if submission.supportive_examples.strip():
            examples.append(Example("supportive", submission.supportive_examples, source))
        if submission.harmful_examples.strip():
            examples.append(Example("harmful", submission.harmful_examples, source))
    return examples
