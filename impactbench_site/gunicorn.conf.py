"""gunicorn settings for the web process (compose.yaml's `web` service runs gunicorn with it).

Environment: GUNICORN_BIND (default 0.0.0.0:8000), GUNICORN_WORKERS (default 2 × cores + 1,
capped at 8), GUNICORN_TIMEOUT (seconds, default 60).
"""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")  # noqa: S104 - inside the container
workers = int(os.environ.get("GUNICORN_WORKERS", min(8, 2 * multiprocessing.cpu_count() + 1)))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
accesslog = "-"
errorlog = "-"
# Behind a reverse proxy that terminates TLS and sets X-Forwarded-Proto.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "*")
