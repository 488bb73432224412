"""Database triggers that make published releases and metric versions immutable.

Services already refuse these changes; the triggers stop everything else (a raw `.update()`,
a shell session, a future bug) so that a published release always means what it meant.

On SQLite a table rebuild (some `AlterField`s) drops its triggers: a migration that alters
these tables must call `guards_install` again. `tests/metrics_registry/test_immutability.py`
checks that every trigger exists.
"""

RELEASE = "metrics_registry_release"
ITEM = "metrics_registry_releaseitem"
VERSION = "metrics_registry_metricversion"
VERSION_SUBAREAS = "metrics_registry_metricversion_subareas"

# Columns whose change would alter what a release or a version says. Foreign keys to users
# (created_by, published_by) are left out so deleting an account can still null them.
RELEASE_CONTENT = ("version", "major", "minor", "patch", "title", "notes", "status", "published_at")
VERSION_CONTENT = (
    "metric_id",
    "number",
    "name",
    "criterion",
    "polarity",
    "label_category_id",
    "rubric_notes",
    "failure_condition",
    "age_contexts",
    "language",
    "change_note",
    "created_at",
)
# The guarded columns as the migrations before the language column installed them (a trigger
# naming a column the table does not have yet would fail every update).
VERSION_CONTENT_BEFORE_LANGUAGE = tuple(c for c in VERSION_CONTENT if c != "language")

TRIGGER_NAMES = (
    "ib_release_published_no_update",
    "ib_release_published_no_delete",
    "ib_item_published_no_insert",
    "ib_item_published_no_update",
    "ib_item_published_no_delete",
    "ib_version_no_update",
    "ib_version_subareas_published_no_insert",
    "ib_version_subareas_published_no_delete",
)

RELEASE_MSG = "Release is published and cannot be changed or deleted."
ITEM_MSG = "Release is published: its metric versions cannot be added, changed or removed."
VERSION_MSG = "Metric versions are immutable: create a new version instead."
SUBAREA_MSG = "Metric version belongs to a published release: its subareas cannot change."


def _published(release_id: str) -> str:
    # Built from module constants only; nothing here comes from user input.
    return f"(SELECT status FROM {RELEASE} WHERE id = {release_id}) = 'published'"  # noqa: S608


def _version_published(version_id: str) -> str:
    join = f"{ITEM} i JOIN {RELEASE} r ON r.id = i.release_id"
    return f"EXISTS (SELECT 1 FROM {join} WHERE i.metric_version_id = {version_id} AND r.status = 'published')"  # noqa: S608, E501


def _sqlite_statements(version_content: tuple[str, ...]) -> list[str]:
    def trigger(name: str, when: str, table: str, condition: str, message: str) -> str:
        return (
            f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {when} ON {table} "
            f"FOR EACH ROW WHEN {condition} BEGIN SELECT RAISE(ABORT, '{message}'); END"
        )

    def changed(columns: tuple[str, ...]) -> str:
        return "(" + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns) + ")"

    return [
        trigger(
            "ib_release_published_no_update",
            "UPDATE",
            RELEASE,
            f"OLD.status = 'published' AND {changed(RELEASE_CONTENT)}",
            RELEASE_MSG,
        ),
        trigger(
            "ib_release_published_no_delete",
            "DELETE",
            RELEASE,
            "OLD.status = 'published'",
            RELEASE_MSG,
        ),
        trigger(
            "ib_item_published_no_insert", "INSERT", ITEM, _published("NEW.release_id"), ITEM_MSG
        ),
        trigger(
            "ib_item_published_no_update",
            "UPDATE",
            ITEM,
            f"{_published('OLD.release_id')} OR {_published('NEW.release_id')}",
            ITEM_MSG,
        ),
        trigger(
            "ib_item_published_no_delete", "DELETE", ITEM, _published("OLD.release_id"), ITEM_MSG
        ),
        trigger("ib_version_no_update", "UPDATE", VERSION, changed(version_content), VERSION_MSG),
        trigger(
            "ib_version_subareas_published_no_insert",
            "INSERT",
            VERSION_SUBAREAS,
            _version_published("NEW.metricversion_id"),
            SUBAREA_MSG,
        ),
        trigger(
            "ib_version_subareas_published_no_delete",
            "DELETE",
            VERSION_SUBAREAS,
            _version_published("OLD.metricversion_id"),
            SUBAREA_MSG,
        ),
    ]


def _postgresql_statements(version_content: tuple[str, ...]) -> list[str]:
    # ERRCODE restrict_violation (23001) surfaces in Django as IntegrityError, like SQLite's ABORT.
    def function(name: str, body: str) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN\n{body}\nEND;\n$$"
        )

    def fail(message: str) -> str:
        return f"RAISE EXCEPTION '{message}' USING ERRCODE = 'restrict_violation';"

    def row(prefix: str, columns: tuple[str, ...]) -> str:
        return "(" + ", ".join(f"{prefix}.{c}" for c in columns) + ")"

    def trigger(name: str, when: str, table: str, func: str) -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {name} ON {table}",
            f"CREATE TRIGGER {name} BEFORE {when} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {func}()",
        ]

    return [
        function(
            "ib_release_published_no_update_fn",
            f"IF OLD.status = 'published' AND {row('OLD', RELEASE_CONTENT)} IS DISTINCT FROM "
            f"{row('NEW', RELEASE_CONTENT)} THEN {fail(RELEASE_MSG)} END IF;\nRETURN NEW;",
        ),
        function(
            "ib_release_published_no_delete_fn",
            f"IF OLD.status = 'published' THEN {fail(RELEASE_MSG)} END IF;\nRETURN OLD;",
        ),
        function(
            "ib_item_published_no_insert_fn",
            f"IF {_published('NEW.release_id')} THEN {fail(ITEM_MSG)} END IF;\nRETURN NEW;",
        ),
        function(
            "ib_item_published_no_update_fn",
            f"IF {_published('OLD.release_id')} OR {_published('NEW.release_id')} THEN "
            f"{fail(ITEM_MSG)} END IF;\nRETURN NEW;",
        ),
        function(
            "ib_item_published_no_delete_fn",
            f"IF {_published('OLD.release_id')} THEN {fail(ITEM_MSG)} END IF;\nRETURN OLD;",
        ),
        function(
            "ib_version_no_update_fn",
            f"IF {row('OLD', version_content)} IS DISTINCT FROM {row('NEW', version_content)} "
            f"THEN {fail(VERSION_MSG)} END IF;\nRETURN NEW;",
        ),
        function(
            "ib_version_subareas_published_no_insert_fn",
            f"IF {_version_published('NEW.metricversion_id')} THEN {fail(SUBAREA_MSG)} END IF;\n"
            "RETURN NEW;",
        ),
        function(
            "ib_version_subareas_published_no_delete_fn",
            f"IF {_version_published('OLD.metricversion_id')} THEN {fail(SUBAREA_MSG)} END IF;\n"
            "RETURN OLD;",
        ),
        *trigger(
            "ib_release_published_no_update", "UPDATE", RELEASE, "ib_release_published_no_update_fn"
        ),
        *trigger(
            "ib_release_published_no_delete", "DELETE", RELEASE, "ib_release_published_no_delete_fn"
        ),
        *trigger("ib_item_published_no_insert", "INSERT", ITEM, "ib_item_published_no_insert_fn"),
        *trigger("ib_item_published_no_update", "UPDATE", ITEM, "ib_item_published_no_update_fn"),
        *trigger("ib_item_published_no_delete", "DELETE", ITEM, "ib_item_published_no_delete_fn"),
        *trigger("ib_version_no_update", "UPDATE", VERSION, "ib_version_no_update_fn"),
        *trigger(
            "ib_version_subareas_published_no_insert",
            "INSERT",
            VERSION_SUBAREAS,
            "ib_version_subareas_published_no_insert_fn",
        ),
        *trigger(
            "ib_version_subareas_published_no_delete",
            "DELETE",
            VERSION_SUBAREAS,
            "ib_version_subareas_published_no_delete_fn",
        ),
    ]


TRIGGER_TABLES = {
    "ib_release_published_no_update": RELEASE,
    "ib_release_published_no_delete": RELEASE,
    "ib_item_published_no_insert": ITEM,
    "ib_item_published_no_update": ITEM,
    "ib_item_published_no_delete": ITEM,
    "ib_version_no_update": VERSION,
    "ib_version_subareas_published_no_insert": VERSION_SUBAREAS,
    "ib_version_subareas_published_no_delete": VERSION_SUBAREAS,
}


def guards_install(schema_editor, *, version_content: tuple[str, ...] = VERSION_CONTENT) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        statements = _postgresql_statements(version_content)
    elif vendor == "sqlite":
        statements = _sqlite_statements(version_content)
    else:  # Other databases run without the extra guard; services still refuse changes.
        return
    for statement in statements:
        schema_editor.execute(statement, params=None)


def guards_remove(schema_editor) -> None:
    vendor = schema_editor.connection.vendor
    for name, table in TRIGGER_TABLES.items():
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}", params=None)
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}_fn()", params=None)
        elif vendor == "sqlite":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}", params=None)


def guards_installed(connection) -> set[str]:
    """Names of the guard triggers present in the database (for tests and health checks)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        elif connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            return set()
        return {name for (name,) in cursor.fetchall()} & set(TRIGGER_NAMES)
