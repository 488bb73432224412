#!/usr/bin/env python
"""Django's command-line utility for ImpactBench."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")
    # Imported once the settings module is chosen, as Django's own manage.py does.
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
