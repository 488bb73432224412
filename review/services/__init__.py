"""Review services (writes). Import from here: `from review.services import ...`."""

from .assignments import (
    assignment_claim,
    assignment_expire_stale,
    assignment_skip,
    queue_rateable_by,
    rating_draft_save,
    rating_submit,
    rating_undo_last,
)
from .calibration import calibration_queue_create, triage_queue_create
from .feedback import (
    contested_metric_ids_kept,
    contested_metric_keep,
    contested_metric_keep_revoke,
    contested_threshold,
    metric_review_feedback,
    metric_support_share,
    review_item_completed,
    rubric_criterion_consensus_record,
)
from .queues import queue_create, queue_set_status

__all__ = [
    "assignment_claim",
    "assignment_expire_stale",
    "assignment_skip",
    "calibration_queue_create",
    "triage_queue_create",
    "contested_metric_ids_kept",
    "contested_metric_keep",
    "contested_metric_keep_revoke",
    "contested_threshold",
    "metric_review_feedback",
    "metric_support_share",
    "queue_create",
    "queue_rateable_by",
    "queue_set_status",
    "rating_draft_save",
    "rating_submit",
    "rating_undo_last",
    "review_item_completed",
    "rubric_criterion_consensus_record",
]
