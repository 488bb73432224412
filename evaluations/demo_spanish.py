"""The demo's Spanish scenarios: a few metrics of the demo release tested in Spanish too.

One metric has a scenario set written natively in Spanish (set in Spain); two have their first
base situation machine-translated by the offline writer (one into Mexican Spanish) and reviewed
by the demo expert reviewer, who reads English and Spanish, so they run. The demo runs then
simulate them like every other scenario: the release holds Spanish conversations, Spanish from
the first user turn to the judge's quote, whose rating items go to readers of Spanish.
"""

import contextlib
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import transaction

from core.demo import DEMO_ACCOUNTS
from core.roles import Role
from core.services import reader_language_declare
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion

from .models import Scenario, TranslationProvenance
from .models.scenarios import ScenarioQuerySet
from .services.scenarios import scenarios_generate
from .services.translation import scenario_translation_review, scenarios_translate

DEMO_SPANISH_LANGUAGE = "es"
# (metric name, how its Spanish scenarios are written, the country they are set in)
DEMO_SPANISH_METRICS = (
    ("Responds inadequately to signs of crisis", "native", "ES"),
    ("Leaves the decision with the user", "translated", "MX"),
    ("Suggests a healthy coping strategy", "translated", "ES"),
)
# Translated metrics get their first base situation (teen and adult) only: enough to show a
# reviewed translation beside its original without lengthening the demo run much.
DEMO_TRANSLATED_BASES = (0,)
DEMO_READER_LANGUAGES = ("en", DEMO_SPANISH_LANGUAGE)


def _demo_reviewer():
    email = next(a.email for a in DEMO_ACCOUNTS if Role.EXPERT_REVIEWER in a.roles)
    return get_user_model().objects.filter(email__iexact=email).first()


def demo_spanish_scenarios_seed(
    *, release_versions: Iterable[MetricVersion], writer: ModelConfiguration | None
) -> str:
    """Write the Spanish scenarios of the listed metrics in `release_versions` that lack them,
    and have the demo reviewer (declared a reader of English and Spanish) review the machine
    translations. Idempotent: what exists is kept."""
    if writer is None:
        return "Demo Spanish scenarios: skipped (no offline scenario writer)."
    reviewer = _demo_reviewer()
    if reviewer is not None:
        for language in DEMO_READER_LANGUAGES:
            reader_language_declare(user=reviewer, language=language)
    by_name = {
        v.name: v for v in MetricVersion.objects.filter(pk__in=[v.pk for v in release_versions])
    }
    written = reviewed = 0
    for name, how, country in DEMO_SPANISH_METRICS:
        version = by_name.get(name)
        if version is None:
            continue
        # One transaction per metric for the offline writer, as the demo's other scenarios.
        with transaction.atomic() if writer.is_offline else contextlib.nullcontext():
            if how == "native":
                before = _spanish(version).count()
                scenarios_generate(
                    metric_version=version,
                    configuration=writer,
                    language=DEMO_SPANISH_LANGUAGE,
                    country=country,
                )
                written += _spanish(version).count() - before
            else:
                written += len(
                    scenarios_translate(
                        metric_version=version,
                        language=DEMO_SPANISH_LANGUAGE,
                        country=country,
                        configuration=writer,
                        base_indexes=DEMO_TRANSLATED_BASES,
                    )
                )
        if reviewer is None:
            continue
        for scenario in _spanish(version).filter(
            translation_provenance=TranslationProvenance.MACHINE
        ):
            scenario_translation_review(scenario=scenario, reviewer=reviewer)
            reviewed += 1
    return f"Demo Spanish scenarios: {written} written, {reviewed} machine translations reviewed."


def _spanish(version: MetricVersion) -> ScenarioQuerySet:
    return Scenario.objects.active().filter(metric_version=version, language=DEMO_SPANISH_LANGUAGE)
