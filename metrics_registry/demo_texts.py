"""The demo catalogue in Spanish: a Spanish reader of the demo sees its metrics in Spanish.

`demo_catalog_es.json` holds a Spanish name and criterion for every demo item but the last,
by item number ("demo item N"). Most are machine translations, written by the demo researcher
and reviewed by the demo expert reviewer, who reads English and Spanish; one is written
natively by that reviewer. The last item has no Spanish text, so a Spanish page shows its
English original with the fallback note.
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from core.demo import DEMO_ACCOUNTS
from core.languages import TranslationProvenance
from core.roles import Role
from core.services import reader_language_declare

from .models import Metric, MetricVersionText
from .services import metric_version_text_review, metric_version_text_save

DEMO_TEXT_LANGUAGE = "es"
DEMO_TEXTS = json.loads(Path(__file__).with_name("demo_catalog_es.json").read_text("utf-8"))
# The reviewer reads English too: declaring a language replaces the default English of the
# rating queues (`core.selectors.reads_language_condition`).
DEMO_REVIEWER_LANGUAGES = ("en", DEMO_TEXT_LANGUAGE)


def _demo_account(role: Role):
    email = next(a.email for a in DEMO_ACCOUNTS if role in a.roles)
    return get_user_model().objects.filter(email__iexact=email).first()


@transaction.atomic
def demo_texts_seed(*, benchmark_slug: str) -> str:
    """Write the Spanish texts of the demo metrics (of benchmark `benchmark_slug`) that lack
    one, and have the demo reviewer review the machine translations. Idempotent."""
    writer, reviewer = _demo_account(Role.RESEARCHER), _demo_account(Role.EXPERT_REVIEWER)
    if writer is None or reviewer is None:
        return "Demo Spanish metric texts: skipped (no demo researcher or reviewer)."
    for language in DEMO_REVIEWER_LANGUAGES:
        reader_language_declare(user=reviewer, language=language)
    versions = {
        metric.source_reference: metric.current_version
        for metric in Metric.objects.filter(benchmark__slug=benchmark_slug).select_related(
            "current_version"
        )
    }
    have = set(
        MetricVersionText.objects.filter(
            metric_version__in=[v for v in versions.values() if v is not None],
            language=DEMO_TEXT_LANGUAGE,
        ).values_list("metric_version_id", flat=True)
    )
    written = reviewed = 0
    for row in DEMO_TEXTS:
        version = versions.get(f"demo item {row['item']}")
        if version is None or version.pk in have:
            continue
        native = row.get("provenance") == TranslationProvenance.NATIVE
        text = metric_version_text_save(
            version=version,
            language=DEMO_TEXT_LANGUAGE,
            name=row["name"],
            criterion=row["criterion"],
            provenance=TranslationProvenance.NATIVE if native else TranslationProvenance.MACHINE,
            writer=reviewer if native else writer,
        )
        written += 1
        if not native:
            metric_version_text_review(text=text, reviewer=reviewer)
            reviewed += 1
    return (
        f"Demo Spanish metric texts: {written} written, {reviewed} machine translations reviewed."
    )
