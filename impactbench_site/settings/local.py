"""Development and demo: debug on, console email, embedded defaults from base."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# Static files straight from the source folders, so the demo also runs with debug off
# (`make demo` turns it off) without a collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
# Local model servers (llama.cpp, vLLM, Ollama on 127.0.0.1 or the LAN) are what development
# and the demo call; set LLM_ENDPOINTS_ALLOW_PRIVATE=false to try the production policy.
LLM_ENDPOINTS_ALLOW_PRIVATE = env.bool("LLM_ENDPOINTS_ALLOW_PRIVATE", default=True)
