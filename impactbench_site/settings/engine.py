"""Background work: the Celery broker and workers, runs that finish by themselves, the batch
engine, worker health and the periodic jobs. Imported into base.py, which holds everything.
"""

from pathlib import Path

from .environment import VAR_DIR, env

# --- Celery ---------------------------------------------------------------------------------
# With no broker URL set, the filesystem transport passes messages through files under var/,
# so the demo needs no broker server and its worker still runs in a separate process.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")


def filesystem_broker_options(folder: Path) -> dict:
    """Transport options for kombu's filesystem broker rooted at `folder` (created if missing)."""
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        # Exchange tables; without this kombu writes them to the current directory.
        "control_folder": str(folder / "control"),
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
    }


# Sized for model latency: a model-bound task may wait on retries with backoff.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=600)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=660)
# A message not acknowledged within this window (its worker died) is delivered again. Sized to
# the longest task (the hard time limit) plus a margin, so a task still running is never handed
# out twice; a dead worker's items come back much sooner through the claim leases and the reaper.
CELERY_BROKER_VISIBILITY_TIMEOUT = env.int(
    "CELERY_BROKER_VISIBILITY_TIMEOUT", default=CELERY_TASK_TIME_LIMIT + 120
)
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(VAR_DIR / "broker")
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_BROKER_VISIBILITY_TIMEOUT}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {"*.tasks.llm_*": {"queue": "llm"}}
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = env.str(
    "CELERY_BEAT_SCHEDULE_FILENAME", default=str(VAR_DIR / "celerybeat-schedule")
)

# --- Runs that finish by themselves (evaluations/services/claims.py, reaper.py) -------------
# A worker's claim on a conversation lasts this long unless its heartbeat renews it (every
# third of it); the reaper, run by Celery beat every RUN_REAPER_INTERVAL_SECONDS, hands out
# expired claims again, re-sends items whose message may have been lost (a broker restart)
# after RUN_REDISPATCH_AFTER_SECONDS, and closes runs with nothing left to do.
RUN_CLAIM_LEASE_SECONDS = env.float("RUN_CLAIM_LEASE_SECONDS", default=60.0)
RUN_REAPER_INTERVAL_SECONDS = env.float("RUN_REAPER_INTERVAL_SECONDS", default=30.0)
RUN_REDISPATCH_AFTER_SECONDS = env.float(
    "RUN_REDISPATCH_AFTER_SECONDS", default=float(CELERY_BROKER_VISIBILITY_TIMEOUT)
)
# With a Redis broker the reaper also reads what the broker holds: a pending item sent this
# long ago whose message is neither queued nor taken by a worker was lost (a broker restart
# without persistence) and is sent again, so a run resumes within about a reaper interval of
# the broker's return. The grace covers a message between a queue and a worker.
RUN_LOST_MESSAGE_GRACE_SECONDS = env.float("RUN_LOST_MESSAGE_GRACE_SECONDS", default=10.0)
# Retries of a conversation task after a transient failure (the gateway's own retries spent, a
# database drop), with backoff RUN_TASK_RETRY_BACKOFF_SECONDS × 2^n (capped at 10 minutes).
RUN_TASK_MAX_RETRIES = env.int("RUN_TASK_MAX_RETRIES", default=3)
RUN_TASK_RETRY_BACKOFF_SECONDS = env.float("RUN_TASK_RETRY_BACKOFF_SECONDS", default=30.0)
# A configuration whose last this-many calls in a run all failed is paused for the run.
RUN_PAUSE_AFTER_ERRORS = env.int("RUN_PAUSE_AFTER_ERRORS", default=20)
# The batch engine: conversations per `llm_process_batch` task, and conversations (each with at
# most one model call in flight) driven at once by one worker process's event loop.
ENGINE_BATCH_SIZE = env.int("ENGINE_BATCH_SIZE", default=128)
ENGINE_CONCURRENCY = env.int("ENGINE_CONCURRENCY", default=256)
# Recorded rows are written in bulk this often (sooner once this many wait, and always before
# a conversation is marked done): a crash loses at most this window of the call log.
ENGINE_FLUSH_SECONDS = env.float("ENGINE_FLUSH_SECONDS", default=0.05)
ENGINE_FLUSH_ROWS = env.int("ENGINE_FLUSH_ROWS", default=500)
# The engine's call journal (evaluations/engine/journal.py); empty: VAR_DIR/journal. A local disk
# of each worker host; when it cannot be written the engine records without it and logs so.
ENGINE_JOURNAL_DIR = env.str("ENGINE_JOURNAL_DIR", default="")
# /health/ready/ wants a worker heartbeat (sent by beat every HEALTH_HEARTBEAT_SECONDS) at
# most this old.
HEALTH_HEARTBEAT_SECONDS = env.float("HEALTH_HEARTBEAT_SECONDS", default=30.0)
HEALTH_WORKER_MAX_AGE_SECONDS = env.int("HEALTH_WORKER_MAX_AGE_SECONDS", default=120)
# /health/ and /health/ready/ answer within this, naming a component that has not (core/health.py).
HEALTH_CHECK_TIMEOUT_SECONDS = env.float("HEALTH_CHECK_TIMEOUT_SECONDS", default=0.8)
# Periodic tasks, run by `celery beat`: one entry per job.
CELERY_BEAT_SCHEDULE = {
    # Submissions whose drafting task was lost are queued again.
    "submissions-requeue-stuck": {
        "task": "submissions.tasks.requeue_stuck_submissions",
        "schedule": env.float("SUBMISSION_REQUEUE_INTERVAL_SECONDS", default=300.0),
    },
    "evaluations-reap-runs": {
        "task": "evaluations.tasks.runs_reap",
        "schedule": RUN_REAPER_INTERVAL_SECONDS,
        "options": {"expires": RUN_REAPER_INTERVAL_SECONDS},
    },
    # Debounced analysis refreshes whose task was lost are sent again.
    "results-refresh-stale-bookings": {
        "task": "results.tasks.refresh_stale_bookings",
        "schedule": env.float("RESULTS_STALE_BOOKING_INTERVAL_SECONDS", default=120.0),
    },
    "core-worker-heartbeat": {
        "task": "core.tasks.worker_heartbeat",
        "schedule": HEALTH_HEARTBEAT_SECONDS,
        "options": {"expires": HEALTH_HEARTBEAT_SECONDS},
    },
}
# After the first new rating on a run, its figures wait this long before they are recomputed
# (results/services/freshness.py); beat re-sends a booking older than twice this.
RESULTS_REFRESH_DEBOUNCE_SECONDS = env.int("RESULTS_REFRESH_DEBOUNCE_SECONDS", default=60)
# A submission still "submitted" or "drafting" this long after its last change is treated as
# having lost its drafting task: beat re-queues the submitted ones, and anyone who may retry
# drafting can retry either (submissions.selectors.drafting_stale_before).
SUBMISSION_STUCK_AFTER_SECONDS = env.int("SUBMISSION_STUCK_AFTER_SECONDS", default=600)
