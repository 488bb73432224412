"""Audit every published interval: ``manage.py audit_figures [--run N] [--base-url URL]``.

Walks the public API and pages (in process, or over HTTP with ``--base-url``) and reports
intervals of width 0, bounds outside the unit's range, values outside their interval, and one
figure shown with two intervals. Exits non-zero when it finds any."""

from __future__ import annotations

import urllib.error
import urllib.request

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.utils.translation import gettext as _

from ...services.figure_audit import Fetch, site_audit


def local_fetch() -> Fetch:
    """Read the site in process, as an anonymous visitor (redirects not followed)."""
    hosts = [h for h in settings.ALLOWED_HOSTS if h not in ("*", "")]
    client = Client(HTTP_HOST=hosts[0].lstrip(".") if hosts else "localhost")

    def fetch(path: str) -> tuple[int, str, bytes]:
        response = client.get(path)
        return response.status_code, response.get("Content-Type", ""), response.content

    return fetch


def http_fetch(base_url: str) -> Fetch:
    def fetch(path: str) -> tuple[int, str, bytes]:
        request = urllib.request.Request(base_url.rstrip("/") + path)  # noqa: S310 - the operator's own site
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                return response.status, response.headers.get("Content-Type", ""), response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Content-Type", ""), b""

    return fetch


class Command(BaseCommand):
    help = "Check every published interval of the public API and pages."

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, help="Only this run (default: every public run).")
        parser.add_argument("--base-url", help="Read a deployed site over HTTP instead.")
        parser.add_argument(
            "--limit", type=int, default=20, help="Findings listed per problem (all are counted)."
        )

    def handle(self, *args, run=None, base_url=None, limit=20, **options):
        fetch = http_fetch(base_url) if base_url else local_fetch()
        report = site_audit(fetch, run_id=run)
        self.stdout.write(
            _(
                "Read %(api)d API responses and %(pages)d pages: %(figures)d figures, "
                "%(intervals)d with an interval."
            )
            % {
                "api": report.api_responses,
                "pages": report.pages,
                "figures": report.figures,
                "intervals": report.with_interval,
            }
        )
        for path in report.unreadable:
            self.stdout.write(_("Not readable: %(path)s") % {"path": path})
        for problem, count in report.counts().items():
            self.stdout.write(f"  {problem}: {count}")
        for (problem, kind), count in report.by_kind().items():
            self.stdout.write(f"    {problem} — {kind}: {count}")
        listed: dict[str, int] = {}
        for finding in report.findings:
            listed[finding.problem] = listed.get(finding.problem, 0) + 1
            if listed[finding.problem] <= limit:
                detail = f"; {finding.detail}" if finding.detail else ""
                self.stdout.write(f"  {finding.problem}: {finding.figure.describe()}{detail}")
        if report.findings:
            raise CommandError(
                _("%(n)d published figures failed the audit.") % {"n": len(report.findings)}
            )
        self.stdout.write(_("Every published interval passed the audit."))
