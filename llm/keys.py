"""Which environment variables a model configuration may name as its API key.

The key is sent as a bearer token to the configuration's base URL, which a maintainer chooses;
so a configuration must never name a variable holding one of the platform's own secrets
(DJANGO_SECRET_KEY, DATABASE_URL, EMAIL_URL, ...). Names must match LLM_API_KEY_ENV_PATTERNS
(shell-style, default `*_API_KEY` and `*_TOKEN`) and not be a platform settings variable;
`llm.egress` then sends it only to the hosts it is bound to (by its provider, or LLM_API_KEY_HOSTS).
"""

import fnmatch
import os

from django.conf import settings
from django.utils.translation import gettext as _

# Variables the platform reads for itself (docs/operations.md "Configuration"), and the prefixes
# of its settings families: refused whatever the patterns say.
PLATFORM_VARIABLES = frozenset(
    {
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "EMAIL_URL",
        "CACHE_URL",
        "LLM_LIMITS_REDIS_URL",
        "SENTRY_DSN",
        "AWS_SECRET_ACCESS_KEY",
    }
)
PLATFORM_PREFIXES = ("DJANGO_", "DATABASE_", "CELERY_", "EMAIL_", "CACHE_", "LLM_", "IMPACTBENCH_")


def api_key_env_problem(name: str) -> str | None:
    """Why `name` may not hold a model API key, or None when it may. Blank means no key."""
    if not name:
        return None
    upper = name.upper()
    if upper in PLATFORM_VARIABLES or upper.startswith(PLATFORM_PREFIXES):
        return _(
            "%(name)s is one of the platform's own settings; a model key must live in its own "
            "variable (for example OPENAI_API_KEY)."
        ) % {"name": name}
    patterns = settings.LLM_API_KEY_ENV_PATTERNS
    if not any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns):
        return _("The variable name must match %(patterns)s (for example OPENAI_API_KEY).") % {
            "patterns": " or ".join(patterns)
        }
    return None


def api_key_env_is_set(name: str) -> bool:
    """Whether the variable has a value in this process (never the value itself)."""
    return bool(name) and api_key_env_problem(name) is None and bool(os.environ.get(name))
