"""Development and demo: debug on, console email, embedded defaults from base."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
