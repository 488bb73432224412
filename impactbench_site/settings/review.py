"""Expert review (review/). Imported into base.py, which holds everything."""

from .environment import env

# --- Expert review (review/) ----------------------------------------------------------------
# Below this share of experts supporting a metric (rated faithful, or agreeing with the judge)
# the metric becomes "contested" and is held back from new release drafts.
REVIEW_CONTESTED_AGREEMENT_THRESHOLD = env.float(
    "REVIEW_CONTESTED_AGREEMENT_THRESHOLD", default=0.6
)
# How long after submitting a rater may take their last rating back.
REVIEW_UNDO_WINDOW_SECONDS = env.int("REVIEW_UNDO_WINDOW_SECONDS", default=600)
