"""Where the caches live and how each is configured (imported by `base`): the rate-limit store
beside the broker, the page cache beside it in a database of its own, bounded on Redis."""

from urllib.parse import urlsplit, urlunsplit

from .environment import env

# What the page cache may take on Redis when the settings give no figure (PAGE_CACHE_MAX_BYTES).
DEFAULT_PAGE_CACHE_MAX_BYTES = 32 * 1024 * 1024


def default_cache_url(broker_url: str) -> str:
    if broker_url.startswith(("redis://", "rediss://")):
        return broker_url
    return "dbcache://django_cache"


# Redis's default number of databases: the one after the last is the first.
REDIS_DATABASES = 16


def default_page_cache_url(cache_url: str) -> str:
    """Beside the rate-limit store: its own table, or the next database of the same Redis."""
    if cache_url.startswith("dbcache://"):
        return "dbcache://django_page_cache"
    if not cache_url.startswith(("redis://", "rediss://")):
        return cache_url
    parts = urlsplit(cache_url)
    database = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(database + 1) % REDIS_DATABASES}"))


def cache_config(
    url: str,
    *,
    key_prefix: str,
    max_entries: int,
    never_cull: bool,
    max_bytes: int | None = None,
) -> dict:
    config = {**env.cache_url_config(url), "KEY_PREFIX": key_prefix}
    if config["BACKEND"] == "django.core.cache.backends.db.DatabaseCache":
        if never_cull:
            config["BACKEND"] = "core.caches.UnculledDatabaseCache"
        config["OPTIONS"] = {**config.get("OPTIONS", {}), "MAX_ENTRIES": max_entries}
    elif config["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
        # A Redis that does not answer fails an operation within a second, and then is skipped
        # for a while instead of costing that second on every operation (core.caches).
        config["BACKEND"] = "core.caches.GuardedRedisCache"
        config["OPTIONS"] = {
            **config.get("OPTIONS", {}),
            "socket_connect_timeout": 1,
            "socket_timeout": 1,
        }
        if not never_cull:
            # Redis ignores MAX_ENTRIES: a cache that may be culled keeps its own bounds.
            config["BACKEND"] = "core.bounded_cache.BoundedRedisCache"
            config["OPTIONS"].update(
                MAX_ENTRIES=max_entries, MAX_BYTES=max_bytes or DEFAULT_PAGE_CACHE_MAX_BYTES
            )
    return config
