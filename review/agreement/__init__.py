"""Agreement figures of rating queues, every one an ``stats.estimates.Estimate``.

``queue``: per question, per metric and per rater; ``panels``: the simulator-pair ranking and
the user-priorities comparison; ``exports``: the ratings as CSV rows.
"""

from .exports import export_header, export_question_names, export_rows, rater_pseudonym
from .panels import priorities_comparison, ranking_languages, simulator_ranking
from .queue import (
    QuestionFigures,
    QueueFigures,
    RatingsTable,
    queue_figures,
    rater_agreement_with_majority,
)

__all__ = [
    "QueueFigures",
    "QuestionFigures",
    "RatingsTable",
    "export_header",
    "export_question_names",
    "export_rows",
    "priorities_comparison",
    "queue_figures",
    "rater_agreement_with_majority",
    "ranking_languages",
    "rater_pseudonym",
    "simulator_ranking",
]
