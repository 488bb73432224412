"""The one django-environ `env` every settings module reads, and the folders paths derive from."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
# A local .env file is a convenience for development; real deployments set variables directly.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = Path(env.str("IMPACTBENCH_VAR_DIR", default=str(BASE_DIR / "var")))
