"""The benchmarks' settings: the test settings with the production model-call timeout.

The test settings give up on a model call after 5 s, which a CPU-starved benchmark (thousands
of calls in flight, a 2 s endpoint) reaches while the reply is on its way; a benchmark should
see the timeout a deployment has. LLM_TIMEOUT_SECONDS overrides it.
"""

from .environment import env
from .test import *  # noqa: F403

LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=60.0)
