"""The model gateway (llm/): limits, timeouts, retries, the response cache and API key names.
Imported into base.py, which holds everything.
"""

from .engine import CELERY_BROKER_URL
from .environment import env

# --- Model gateway (llm/) -------------------------------------------------------------------
# Per-configuration concurrency and rate limits (llm/limits.py): Redis when the broker is Redis,
# else the database. Waiting for a slot gives up (retryably) after LLM_LIMIT_MAX_WAIT_SECONDS.
LLM_LIMITS_BACKEND = env.str("LLM_LIMITS_BACKEND", default="auto")  # auto, redis, database
LLM_LIMITS_REDIS_URL = env.str(
    "LLM_LIMITS_REDIS_URL",
    default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "",
)
LLM_LIMITS_KEY_PREFIX = env.str("LLM_LIMITS_KEY_PREFIX", default="impactbench:llm-limits")
LLM_LIMIT_MAX_WAIT_SECONDS = env.float("LLM_LIMIT_MAX_WAIT_SECONDS", default=300.0)
# A 429 halves the requests a process sends at once on that configuration; answers raise it
# again, one at a time, to max_concurrency (llm/admission.py). False: always max_concurrency.
LLM_ADAPTIVE_CONCURRENCY = env.bool("LLM_ADAPTIVE_CONCURRENCY", default=True)
# The batch engine's permits live this long unless their process renews them (every third of
# it): a killed worker's slots come back within it (llm/limits/common.py).
LLM_PERMIT_LEASE_SECONDS = env.float("LLM_PERMIT_LEASE_SECONDS", default=15.0)
# A limits Redis that hangs costs a process one socket timeout per outage window, not one per
# call: after a timeout it is skipped (calls wait as for any unreachable store) for this long,
# then one call tries it again (llm/limits/redis_backend.py).
LLM_LIMITS_SOCKET_TIMEOUT = env.float("LLM_LIMITS_SOCKET_TIMEOUT", default=5.0)
LLM_LIMITS_OUTAGE_SKIP_SECONDS = env.float("LLM_LIMITS_OUTAGE_SKIP_SECONDS", default=2.0)
LLM_DEFAULT_BASE_URL = env.str("OPENAI_BASE_URL", default="https://api.openai.com/v1")
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=60.0)
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=5)
LLM_BACKOFF_BASE_SECONDS = env.float("LLM_BACKOFF_BASE_SECONDS", default=1.0)
LLM_BACKOFF_MAX_SECONDS = env.float("LLM_BACKOFF_MAX_SECONDS", default=30.0)
LLM_STRUCTURED_REASKS = env.int("LLM_STRUCTURED_REASKS", default=2)
# A structured reply cut off at max_tokens is asked again once with twice the limit; with no
# limit configured, twice this one.
LLM_CUTOFF_DEFAULT_MAX_TOKENS = env.int("LLM_CUTOFF_DEFAULT_MAX_TOKENS", default=2048)
LLM_CACHE_ENABLED = env.bool("LLM_CACHE_ENABLED", default=True)
# Batch mode (llm/batches_reaper.py): how often the reaper asks the provider about a submitted
# batch, and the most requests one batch holds (the provider's own limit applies if lower).
LLM_BATCH_POLL_SECONDS = env.float("LLM_BATCH_POLL_SECONDS", default=60.0)
LLM_BATCH_MAX_REQUESTS = env.int("LLM_BATCH_MAX_REQUESTS", default=50_000)
# Attempts of unknown outcome of a configuration that has the provider keep its completions
# (llm/reconcile.py): the reaper looks each up at the provider this long after it was restored
# (and again at this interval while the provider has none or cannot be reached); one the
# provider still has no record of this long after it was restored was never answered, not billed.
LLM_RECONCILE_AFTER_SECONDS = env.float("LLM_RECONCILE_AFTER_SECONDS", default=60.0)
LLM_RECONCILE_GIVE_UP_SECONDS = env.float("LLM_RECONCILE_GIVE_UP_SECONDS", default=3600.0)
# Names a model configuration may give as its API key variable (shell patterns, llm/keys.py);
# the platform's own settings variables are refused whatever these say.
LLM_API_KEY_ENV_PATTERNS = env.list("LLM_API_KEY_ENV_PATTERNS", default=["*_API_KEY", "*_TOKEN"])
