"""Keep `RunUsageTotal` by triggers on the call log, and fill it from the attempts stored so far.

Why triggers, and why shards: `llm/models/usage.py`. The triggers and the backfill run in this
migration's transaction: on PostgreSQL, CREATE TRIGGER locks the call log against writes until
commit, so no attempt is written between the backfill's read and the triggers taking over (none
counted twice, none missed). The outcome lists are spelled out here, frozen with the migration.
"""

# The SQL below is assembled from this module's constants only (no outside input).
# ruff: noqa: S608

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

SHARDS = 16
SUCCESS = "'success'"
CACHED = "'cached'"
RATE_LIMITED = "'rate_limited'"
ERRORS = (
    "('http_error', 'rate_limited', 'timeout', 'connection_error', 'invalid_output', "
    "'malformed', 'failed')"
)
COST_UNITS = "CAST(ROUND({c}.cost_estimate * 100000000) AS BIGINT)"
COLUMNS = (
    "run_id, shard, attempts, successes, failures, cache_hits, rate_limited, prompt_tokens, "
    "completion_tokens, cost_units, limit_wait_ms, backoff_ms, latest_backoff_id, "
    "latest_backoff_at, latest_backoff_ms"
)


def _sums(rows: str, sign: str) -> str:
    """The summed columns of `rows` (alias c), each attempt counted `sign` times."""
    return f"""
        SUM({sign}) AS attempts,
        SUM(CASE WHEN c.outcome = {SUCCESS} THEN {sign} ELSE 0 END) AS successes,
        SUM(CASE WHEN c.outcome IN {ERRORS} THEN {sign} ELSE 0 END) AS failures,
        SUM(CASE WHEN c.outcome = {CACHED} THEN {sign} ELSE 0 END) AS cache_hits,
        SUM(CASE WHEN c.outcome = {RATE_LIMITED} THEN {sign} ELSE 0 END) AS rate_limited,
        SUM({sign} * c.prompt_tokens) AS prompt_tokens,
        SUM({sign} * c.completion_tokens) AS completion_tokens,
        SUM({sign} * {COST_UNITS.format(c="c")}) AS cost_units,
        SUM({sign} * c.limit_wait_ms) AS limit_wait_ms,
        SUM({sign} * c.backoff_ms) AS backoff_ms,
        MAX(CASE WHEN {sign} > 0 AND c.backoff_ms > 0 THEN c.id END) AS backoff_id
    FROM {rows} c WHERE c.run_id IS NOT NULL GROUP BY c.run_id"""


BACKFILL = f"""
INSERT INTO llm_runusagetotal ({COLUMNS})
SELECT d.run_id, 0, d.attempts, d.successes, d.failures, d.cache_hits, d.rate_limited,
    d.prompt_tokens, d.completion_tokens, d.cost_units, d.limit_wait_ms, d.backoff_ms,
    b.id, b.created_at, COALESCE(b.backoff_ms, 0)
FROM (SELECT c.run_id, {_sums("llm_llmcall", "1")}) d
LEFT JOIN llm_llmcall b ON b.id = d.backoff_id
"""

# --- PostgreSQL: statement triggers over the transition tables (one upsert per run a statement
# touched, in run order, into this connection's shard).
_PG_ADD = f"""
    INSERT INTO llm_runusagetotal AS t ({COLUMNS})
    SELECT d.run_id, pg_backend_pid() % {SHARDS}, d.attempts, d.successes, d.failures,
        d.cache_hits, d.rate_limited, d.prompt_tokens, d.completion_tokens, d.cost_units,
        d.limit_wait_ms, d.backoff_ms, b.id, b.created_at, COALESCE(b.backoff_ms, 0)
    FROM (SELECT c.run_id, {{sums}}) d
    LEFT JOIN llm_llmcall b ON b.id = d.backoff_id
    WHERE d.backoff_id IS NOT NULL OR (d.attempts, d.successes, d.failures, d.cache_hits,
        d.rate_limited, d.prompt_tokens, d.completion_tokens, d.cost_units, d.limit_wait_ms,
        d.backoff_ms) <> (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    ORDER BY d.run_id
    ON CONFLICT (run_id, shard) DO UPDATE SET
        attempts = t.attempts + EXCLUDED.attempts,
        successes = t.successes + EXCLUDED.successes,
        failures = t.failures + EXCLUDED.failures,
        cache_hits = t.cache_hits + EXCLUDED.cache_hits,
        rate_limited = t.rate_limited + EXCLUDED.rate_limited,
        prompt_tokens = t.prompt_tokens + EXCLUDED.prompt_tokens,
        completion_tokens = t.completion_tokens + EXCLUDED.completion_tokens,
        cost_units = t.cost_units + EXCLUDED.cost_units,
        limit_wait_ms = t.limit_wait_ms + EXCLUDED.limit_wait_ms,
        backoff_ms = t.backoff_ms + EXCLUDED.backoff_ms,
        latest_backoff_id = GREATEST(t.latest_backoff_id, EXCLUDED.latest_backoff_id),
        latest_backoff_at = CASE WHEN EXCLUDED.latest_backoff_id > COALESCE(t.latest_backoff_id, 0)
            THEN EXCLUDED.latest_backoff_at ELSE t.latest_backoff_at END,
        latest_backoff_ms = CASE WHEN EXCLUDED.latest_backoff_id > COALESCE(t.latest_backoff_id, 0)
            THEN EXCLUDED.latest_backoff_ms ELSE t.latest_backoff_ms END;
"""

# The latest backoff of a run lost one of its attempts (deleted, or changed): look it up again
# in the call log (rare: deleting attempts, or a changed attempt that had backed off).
_PG_LATEST_AGAIN = f"""
    UPDATE llm_runusagetotal t SET latest_backoff_id = NULL, latest_backoff_at = NULL,
        latest_backoff_ms = 0
    WHERE t.run_id IN (SELECT o.run_id FROM old_calls o);
    INSERT INTO llm_runusagetotal AS t ({COLUMNS})
    SELECT r.run_id, pg_backend_pid() % {SHARDS}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        b.id, b.created_at, b.backoff_ms
    FROM (SELECT DISTINCT o.run_id FROM old_calls o WHERE o.run_id IS NOT NULL) r
    CROSS JOIN LATERAL (
        SELECT c.id, c.created_at, c.backoff_ms FROM llm_llmcall c
        WHERE c.run_id = r.run_id AND c.backoff_ms > 0 ORDER BY c.id DESC LIMIT 1
    ) b
    ORDER BY r.run_id
    ON CONFLICT (run_id, shard) DO UPDATE SET latest_backoff_id = EXCLUDED.latest_backoff_id,
        latest_backoff_at = EXCLUDED.latest_backoff_at,
        latest_backoff_ms = EXCLUDED.latest_backoff_ms;
"""

PG_FORWARD = f"""
CREATE FUNCTION llm_run_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{_PG_ADD.replace("{sums}", _sums("new_calls", "1"))}
    RETURN NULL;
END $$;

CREATE FUNCTION llm_run_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{_PG_ADD.replace("{sums}", _sums("old_calls", "-1"))}
    IF EXISTS (SELECT 1 FROM old_calls o JOIN llm_runusagetotal t
               ON t.run_id = o.run_id AND t.latest_backoff_id = o.id) THEN
{_PG_LATEST_AGAIN}
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION llm_run_usage_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{
    _PG_ADD.replace(
        "{sums}",
        _sums(
            "(SELECT 1 AS sign, * FROM new_calls UNION ALL SELECT -1 AS sign, * FROM old_calls)",
            "c.sign",
        ),
    )
}
    IF EXISTS (SELECT 1 FROM old_calls o JOIN new_calls n ON n.id = o.id
               JOIN llm_runusagetotal t ON t.run_id = o.run_id AND t.latest_backoff_id = o.id
               WHERE (o.run_id, o.backoff_ms, o.created_at)
                     IS DISTINCT FROM (n.run_id, n.backoff_ms, n.created_at)) THEN
{_PG_LATEST_AGAIN}
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER llm_run_usage_insert AFTER INSERT ON llm_llmcall
    REFERENCING NEW TABLE AS new_calls
    FOR EACH STATEMENT EXECUTE FUNCTION llm_run_usage_insert();
CREATE TRIGGER llm_run_usage_delete AFTER DELETE ON llm_llmcall
    REFERENCING OLD TABLE AS old_calls
    FOR EACH STATEMENT EXECUTE FUNCTION llm_run_usage_delete();
CREATE TRIGGER llm_run_usage_update AFTER UPDATE ON llm_llmcall
    REFERENCING OLD TABLE AS old_calls NEW TABLE AS new_calls
    FOR EACH STATEMENT EXECUTE FUNCTION llm_run_usage_update();
"""

PG_BACKWARD = """
DROP TRIGGER IF EXISTS llm_run_usage_insert ON llm_llmcall;
DROP TRIGGER IF EXISTS llm_run_usage_delete ON llm_llmcall;
DROP TRIGGER IF EXISTS llm_run_usage_update ON llm_llmcall;
DROP FUNCTION IF EXISTS llm_run_usage_insert();
DROP FUNCTION IF EXISTS llm_run_usage_delete();
DROP FUNCTION IF EXISTS llm_run_usage_update();
"""


# --- SQLite: row triggers (one writer at a time, one row per run). The row is added if missing
# with NOT EXISTS, not INSERT OR IGNORE: a trigger's conflict clause gives way to that of the
# statement that fired it (the recorder's upsert). A delete only updates a row that exists, so
# emptying the tables (a test's flush) in any order leaves none behind.
def _sqlite_add(row: str) -> str:
    return f"""
    INSERT INTO llm_runusagetotal ({COLUMNS})
        SELECT {row}.run_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, 0
        WHERE {row}.run_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM llm_runusagetotal WHERE run_id = {row}.run_id AND shard = 0);
    UPDATE llm_runusagetotal SET
        attempts = attempts + 1,
        successes = successes + ({row}.outcome = {SUCCESS}),
        failures = failures + ({row}.outcome IN {ERRORS}),
        cache_hits = cache_hits + ({row}.outcome = {CACHED}),
        rate_limited = rate_limited + ({row}.outcome = {RATE_LIMITED}),
        prompt_tokens = prompt_tokens + {row}.prompt_tokens,
        completion_tokens = completion_tokens + {row}.completion_tokens,
        cost_units = cost_units + {COST_UNITS.format(c=row)},
        limit_wait_ms = limit_wait_ms + {row}.limit_wait_ms,
        backoff_ms = backoff_ms + {row}.backoff_ms,
        latest_backoff_at = CASE WHEN {row}.backoff_ms > 0
            AND {row}.id > COALESCE(latest_backoff_id, 0)
            THEN {row}.created_at ELSE latest_backoff_at END,
        latest_backoff_ms = CASE WHEN {row}.backoff_ms > 0
            AND {row}.id > COALESCE(latest_backoff_id, 0)
            THEN {row}.backoff_ms ELSE latest_backoff_ms END,
        latest_backoff_id = CASE WHEN {row}.backoff_ms > 0
            AND {row}.id > COALESCE(latest_backoff_id, 0)
            THEN {row}.id ELSE latest_backoff_id END
    WHERE run_id = {row}.run_id AND shard = 0;
"""


def _sqlite_remove(row: str) -> str:
    latest = (
        f"FROM llm_llmcall c WHERE c.run_id = {row}.run_id AND c.backoff_ms > 0 "
        "ORDER BY c.id DESC LIMIT 1"
    )
    return f"""
    UPDATE llm_runusagetotal SET
        attempts = attempts - 1,
        successes = successes - ({row}.outcome = {SUCCESS}),
        failures = failures - ({row}.outcome IN {ERRORS}),
        cache_hits = cache_hits - ({row}.outcome = {CACHED}),
        rate_limited = rate_limited - ({row}.outcome = {RATE_LIMITED}),
        prompt_tokens = prompt_tokens - {row}.prompt_tokens,
        completion_tokens = completion_tokens - {row}.completion_tokens,
        cost_units = cost_units - {COST_UNITS.format(c=row)},
        limit_wait_ms = limit_wait_ms - {row}.limit_wait_ms,
        backoff_ms = backoff_ms - {row}.backoff_ms
    WHERE run_id = {row}.run_id AND shard = 0;
    UPDATE llm_runusagetotal SET
        latest_backoff_id = (SELECT c.id {latest}),
        latest_backoff_at = (SELECT c.created_at {latest}),
        latest_backoff_ms = COALESCE((SELECT c.backoff_ms {latest}), 0)
    WHERE run_id = {row}.run_id AND shard = 0 AND latest_backoff_id = {row}.id;
"""


SQLITE_FORWARD = [
    f"""CREATE TRIGGER llm_run_usage_insert AFTER INSERT ON llm_llmcall
    WHEN NEW.run_id IS NOT NULL BEGIN {_sqlite_add("NEW")} END""",
    f"""CREATE TRIGGER llm_run_usage_delete AFTER DELETE ON llm_llmcall
    WHEN OLD.run_id IS NOT NULL BEGIN {_sqlite_remove("OLD")} END""",
    f"""CREATE TRIGGER llm_run_usage_update AFTER UPDATE ON llm_llmcall
    BEGIN {_sqlite_remove("OLD")} {_sqlite_add("NEW")} END""",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS llm_run_usage_insert",
    "DROP TRIGGER IF EXISTS llm_run_usage_delete",
    "DROP TRIGGER IF EXISTS llm_run_usage_update",
]


def _run(schema_editor: BaseDatabaseSchemaEditor, statements: list[str]) -> None:
    # Without parameters, so the driver leaves the `%` of `pg_backend_pid() % 16` alone.
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        _run(schema_editor, [PG_FORWARD])
    elif vendor == "sqlite":
        _run(schema_editor, SQLITE_FORWARD)
    else:
        raise NotImplementedError(f"No call-log usage triggers for {vendor}")
    _run(schema_editor, ["DELETE FROM llm_runusagetotal", BACKFILL])


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    postgres = schema_editor.connection.vendor == "postgresql"
    _run(schema_editor, [PG_BACKWARD] if postgres else SQLITE_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [
        ("llm", "0011_run_usage_totals"),
    ]

    operations = [migrations.RunPython(forward, backward)]
