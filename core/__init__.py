"""The ground floor: what every app shares and nothing app-specific.

Roles and their groups, the timestamped base model, ``ApplicationError``, the sanitizer and the
fence for user text in prompts, the one event bus (``events``), the one CSV writer
(``csvsafe``), the page cache (``pagecache``, whose stamp parts the apps register over their
own tables), generic row and seed helpers (``rows``), the progress callback shape
(``progress``), health checks and the worker heartbeat. ``core`` imports no other package of
the project: an app that needs to tell others something publishes an event here.
"""
