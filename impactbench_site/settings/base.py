"""Settings shared by every environment; each value can be overridden from the environment.

Every variable read here is documented in docs/operations.md ("Configuration") and `.env.example`.
Background work (engine.py), the model gateway (gateway.py) and expert review (review.py) keep
their settings in their own modules, gathered here: base holds everything.
"""

from pathlib import Path

from csp.constants import NONCE, NONE, SELF

from .cache_urls import (
    DEFAULT_PAGE_CACHE_MAX_BYTES,
    cache_config,
    default_cache_url,
    default_page_cache_url,
)
from .engine import *  # noqa: F403
from .environment import BASE_DIR, VAR_DIR, env
from .gateway import *  # noqa: F403
from .review import *  # noqa: F403

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="insecure-development-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000")

INSTALLED_APPS = [
    "impactbench_site.apps.ImpactBenchAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.sites",
    "allauth",
    "allauth.account",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "crispy_forms",
    "crispy_bootstrap5",
    "django_htmx",
    "csp",
    "core",
    "llm",
    "metrics_registry",
    "submissions",
    "evaluations",
    "rubrics",
    "review",
    "results",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before anything reads a body: an oversized one is refused unread.
    "core.middleware.RequestSizeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions (it may read them), before CommonMiddleware (which may redirect to a URL
    # resolved in the active language). A page's plain URL is in the reader's choice (the
    # language cookie the footer's switcher sets) or their Accept-Language; its prefixed URL
    # (/es/...) always in that language (core.locale_urls).
    "core.locale_urls.PathFirstLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Turns an unreachable rate-limit store into a clear 503 (fail closed) instead of a 500.
    "core.middleware.RateLimitStoreMiddleware",
    # Last, so its 400s still get every security header; before any view or database lookup.
    "core.middleware.ControlCharacterMiddleware",
]

ROOT_URLCONF = "impactbench_site.urls"
WSGI_APPLICATION = "impactbench_site.wsgi.application"
ASGI_APPLICATION = "impactbench_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.navigation",
                "demo.context_processors.demo_seed",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# SQLite under var/ unless DATABASE_URL says otherwise (postgres://user@host:5432/name).
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'impactbench.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the Celery worker write to the same file: WAL lets readers proceed
    # while one writer works, and IMMEDIATE transactions wait for the lock instead of failing.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # A server that does not complete a connection in this long is reported as down (psycopg
    # waits at least 2 s), instead of holding a web worker until gunicorn's timeout.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env.int(
        "DATABASE_CONNECT_TIMEOUT_SECONDS", default=3
    )
# The longest a statement may take, on the server and (a margin later) on the client, which
# also ends a wait on a server that never answers (core/dbwait.py): web requests answer within
# gunicorn's 60 s; tasks get their soft time limit. Management commands are unbounded.
DATABASE_STATEMENT_TIMEOUT_SECONDS = env.float("DATABASE_STATEMENT_TIMEOUT_SECONDS", default=20.0)
DATABASE_TASK_STATEMENT_TIMEOUT_SECONDS = env.float(
    "DATABASE_TASK_STATEMENT_TIMEOUT_SECONDS", default=600.0
)
DATABASE_CLIENT_MARGIN_SECONDS = env.float("DATABASE_CLIENT_MARGIN_SECONDS", default=5.0)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Accounts -------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
    "core.backends.MaintainerPermissionBackend",
]
SITE_ID = 1
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "core:dashboard"
ACCOUNT_ADAPTER = "core.adapters.AccountAdapter"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = env.str("ACCOUNT_EMAIL_VERIFICATION", default="mandatory")
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_LOGOUT_ON_GET = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[ImpactBench] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = env.str("ACCOUNT_DEFAULT_HTTP_PROTOCOL", default="http")


# --- Cache ----------------------------------------------------------------------------------
# Two caches. "default" holds rate-limit state (allauth's per-address sign-in, sign-up and
# password-reset counters; account lockouts are in the database): shared by every web process
# and never culled, so no amount of other traffic can clear a limit. Redis when the broker is
# Redis, else a database table (made by core's migrations) whose entries are deleted only once
# expired. "pages" holds rebuildable pages and figures (core.pagecache). On Redis it is bounded
# by its own eviction (core.bounded_cache: PAGE_CACHE_MAX_BYTES of what Redis reports its keys
# use, PAGE_CACHE_MAX_ENTRIES entries, the oldest evicted first) because Redis itself runs
# noeviction for the broker's queues, and by default it lives in the next database number of
# the rate-limit store's server (the broker's /0 gives /1): no page-cache operation can reach a
# queue or a counter. On the embedded default it is its own table, culled by Django at
# PAGE_CACHE_MAX_ENTRIES rows. CACHE_URL and PAGE_CACHE_URL override the locations.
CACHE_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", default="impactbench")
_RATE_LIMIT_CACHE_URL = env.str(
    "CACHE_URL", default=default_cache_url(env.str("CELERY_BROKER_URL", default=""))
)
_PAGE_CACHE_URL = env.str("PAGE_CACHE_URL", default=default_page_cache_url(_RATE_LIMIT_CACHE_URL))
# About 40 kB a page: 5,000 entries keep every page of a full release and its runs warm (on
# Redis the byte cap below usually binds first; a release's pages are also stored ahead in the
# database, core.page_store, so a page pushed out costs one indexed read).
PAGE_CACHE_MAX_ENTRIES = env.int("PAGE_CACHE_MAX_ENTRIES", default=5000)
# What the page cache may take on Redis, as Redis counts its keys (values, keys, allocator
# rounding and the cache's own index); one entry may take an eighth of it.
PAGE_CACHE_MAX_BYTES = env.int("PAGE_CACHE_MAX_BYTES", default=DEFAULT_PAGE_CACHE_MAX_BYTES)
CACHES = {
    # MAX_ENTRIES here only says when expired counters are swept (never a live one).
    "default": cache_config(
        _RATE_LIMIT_CACHE_URL, key_prefix=CACHE_KEY_PREFIX, max_entries=10_000, never_cull=True
    ),
    "pages": cache_config(
        _PAGE_CACHE_URL,
        key_prefix=f"{CACHE_KEY_PREFIX}-pages",
        max_entries=PAGE_CACHE_MAX_ENTRIES,
        never_cull=False,
        max_bytes=PAGE_CACHE_MAX_BYTES,
    ),
}
# Sign-in limits (the admin signs in through the same view, see impactbench_site/admin.py).
# 5 attempts per account in 5 minutes lock it; the attempts are rows in the database
# (core.services.sign_in_attempt_begin), so a cache restarted empty unlocks nobody. allauth
# counts the 10 per minute per address in the cache; that store being unreachable refuses
# sign-in (core.middleware.RateLimitStoreMiddleware).
SIGN_IN_LOCKOUT_FAILURES = 5
SIGN_IN_LOCKOUT_SECONDS = 300
ACCOUNT_RATE_LIMITS = {"login_failed": "10/m/ip"}

# The largest request body accepted (imports are 2 MB; a dry run's staged copy travels back in
# the form). Larger bodies are refused from their Content-Length, before anything reads them.
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=10 * 1024 * 1024)

# --- Email ----------------------------------------------------------------------------------
# consolemail:// prints messages (with verification links) to the web server's output.
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str(
    "DEFAULT_FROM_EMAIL", default="ImpactBench <noreply@impactbench.local>"
)
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- Internationalisation -------------------------------------------------------------------
LANGUAGE_CODE = "en"
# The interface's languages; a page's permalink is the same in each (no /es/ prefix), so the
# page cache keys every page by its language (`core.pagecache.page_key`).
LANGUAGES = [("en", "English"), ("es", "Español")]
# A language Django lists in LANGUAGES_BIDI (ar, fa, he…) gets <html dir="rtl"> once added.
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "media/"

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    # JSON only: DRF's browsable pages need inline script and style, which the CSP refuses;
    # people browse the API on /api/docs/.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.CheckedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ImpactBench API",
    # Says what the endpoints below offer, no more: results are on the website and in exports.
    "DESCRIPTION": (
        "Read-only access to ImpactBench. The metric registry: every metric with its current "
        "version, and each release with the metric versions it froze. Published results of "
        "official runs: areas and subareas, runs, results at every level (overall, area, "
        "subarea, metric × model × polarity × age context, each with its interval and n; a whole "
        "run as JSON Lines or CSV), the Explore wheel's figures, a metric's results, scenarios, "
        "conversations with their judge verdicts, and each model's Nutrition Label (labels). "
        "Per run, its judge panel, expert-calibrated pass rates, swap studies and evidence "
        "re-asks. The published anchor study (anchor-study): how often replicates disagree on "
        "the anchors raised with and without anchors, the paired difference and the anchor "
        "checker's own noise. "
        "A published release's expert figures (releases/<version>/expert-figures), frozen when "
        "it was published: scenario quality, conversation realism and pressure, experts against "
        "the judge (agreement, Cohen's kappa, Krippendorff's alpha, by metric) with interval and "
        "n, so a cited figure never moves as later ratings arrive. "
        "Rubric results of official runs (rubrics): each model's HealthBench score overall, per "
        "behaviour dimension, acuity and population with interval and n, the graded replies "
        "behind each figure with every criterion, users' against clinicians' priorities, and a "
        "run's graded replies as JSON Lines (HealthBench's result shape) or CSV. "
        "Signed-in contributors also read their own construct submissions and what was drafted "
        "from them (researchers and maintainers: all submissions). A release's full data is "
        "downloadable as JSON, JSON Lines or CSV from its release page."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the sidecar package, served locally: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models share field names with different choice sets: name each enum.
    "ENUM_NAME_OVERRIDES": {
        "PolarityEnum": "metrics_registry.models.Polarity",
        "ReleaseStatusEnum": "metrics_registry.models.ReleaseStatus",
        "SubmissionStatusEnum": "submissions.models.SubmissionStatus",
        "CandidateStatusEnum": "submissions.models.CandidateStatus",
        "ConversationStatusEnum": "evaluations.models.ConversationStatus",
        "FidelityCriterionEnum": "evaluations.models.FidelityCriterion",
        "CostStatusEnum": "results.services.run_cost.COST_STATUSES",
    },
    # Null-valued enum fields get their own "null" option rather than a NullEnum component.
    "ENUM_ADD_EXPLICIT_BLANK_NULL_CHOICE": False,
}

# --- Demo -----------------------------------------------------------------------------------
# `seed_demo` writes scenarios for the demo release and runs a complete offline evaluation
# (about a minute or two). Tests switch it off and exercise those steps on a small catalogue.
DEMO_SEED_EVALUATIONS = env.bool("DEMO_SEED_EVALUATIONS", default=True)
# The demo seed's progress (demo/progress.py), read by every page for the seeding banner.
DEMO_SEED_PROGRESS_FILE = VAR_DIR / "demo-seed.json"

# --- Content-Security-Policy (django-csp) ---------------------------------------------------
# Scripts, styles, fonts and images come from this site only (no CDN); inline <script> and
# <style> run only with the per-response nonce ({{ request.csp_nonce }}), and style attributes
# are refused (templates use classes; progress bars get their width from static/js).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- Input limits ---------------------------------------------------------------------------
# Every free-text field (forms, imports) holds at most this many characters; forms count down.
TEXT_FIELD_MAX_LENGTH = env.int("TEXT_FIELD_MAX_LENGTH", default=10_000)

# --- Logging --------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# --- Where model calls may go (llm/egress.py; docs/security.md "Model endpoints") ------------
# Link-local and cloud-metadata addresses are refused always. Loopback, private, CGNAT and
# unique-local addresses only when this is on: local model servers are a main use case of
# development and the demo (settings/local.py turns it on), a production site calls hosted APIs.
LLM_ENDPOINTS_ALLOW_PRIVATE = env.bool("LLM_ENDPOINTS_ALLOW_PRIVATE", default=False)


def api_key_hosts(value: str) -> dict[str, list[str]]:
    """The variables named in `value` ("NAME=host,*.host;OTHER=10.0.0.5") and their hosts."""
    bound = {}
    for entry in filter(None, (part.strip() for part in value.split(";"))):
        name, _, hosts = entry.partition("=")
        bound[name.strip()] = [h.strip().lower() for h in hosts.split(",") if h.strip()]
    return bound


# The hosts (shell patterns) each API-key variable may be sent to, beyond the providers' own
# (each provider binds its services' variables to their hosts: OPENAI_API_KEY to
# api.openai.com, …): an entry replaces that variable's hosts. A variable bound to no host is
# sent nowhere.
LLM_API_KEY_HOSTS = api_key_hosts(env.str("LLM_API_KEY_HOSTS", default=""))
