"""Machine-translated scenarios stay out of runs until someone who reads them reviews them."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from core.exceptions import ApplicationError
from core.services import reader_language_declare
from evaluations.models import TranslationProvenance
from evaluations.selectors import scenario_set_complete
from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from evaluations.services.translation import scenario_translation_review
from tests.evaluations.factories import ScenarioFactory, current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


def machine_translated(**kwargs):
    return ScenarioFactory(
        language="es", translation_provenance=TranslationProvenance.MACHINE, **kwargs
    )


def test_scenarios_are_english_and_native_unless_told(researcher):
    scenario = ScenarioFactory()
    assert scenario.language == "en"
    assert scenario.translation_provenance == TranslationProvenance.NATIVE
    scenario.language = "es-mx"
    with pytest.raises(ValidationError, match="es-MX"):
        scenario.full_clean()


def test_only_an_expert_who_reads_the_language_reviews_a_translation(expert_reviewer, researcher):
    scenario = machine_translated()
    with pytest.raises(ApplicationError, match="Only an expert reviewer"):
        scenario_translation_review(scenario=scenario, reviewer=researcher)
    with pytest.raises(ApplicationError, match="needs a reader of Spanish"):
        scenario_translation_review(scenario=scenario, reviewer=expert_reviewer)
    reviewed = scenario_translation_review(
        scenario=scenario, reviewer=expert_reviewer, declare_reads_language=True
    )
    assert reviewed.translation_provenance == TranslationProvenance.MACHINE_REVIEWED
    assert reviewed.translation_reviewed_by == expert_reviewer
    assert reviewed.translation_reviewed_at is not None
    assert list(expert_reviewer.reader_languages.values_list("language", flat=True)) == ["es"]
    with pytest.raises(ApplicationError, match="already been reviewed"):
        scenario_translation_review(scenario=scenario, reviewer=expert_reviewer)
    with pytest.raises(ApplicationError, match="written natively"):
        scenario_translation_review(scenario=ScenarioFactory(), reviewer=expert_reviewer)


def test_an_unreviewed_translation_keeps_its_run_from_launching():
    metric = MetricFactory()
    version = current_version(metric)
    scenarios_generate(metric_version=version, configuration=OfflineConfigurationFactory())
    translated = version.scenarios.active().first()
    translated.language = "es"
    translated.translation_provenance = TranslationProvenance.MACHINE
    translated.save()
    offline = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Spanish", metric_versions=[version], targets=[offline], simulator=offline,
        judge=offline,
    )  # fmt: skip
    assert translated not in runs.run_scenarios(run)
    assert runs.run_scenarios(run).count() == 5
    with pytest.raises(ApplicationError, match=r"1 scenario is machine-translated .*\(es\)"):
        runs.run_launch(run=run)

    translated.translation_provenance = TranslationProvenance.MACHINE_REVIEWED
    translated.save()
    assert runs.run_scenarios(run).count() == 6
    assert runs.run_plan(run).versions_missing_scenarios == []


def test_the_workspace_page_shows_the_language_and_reviews_it(client_for, expert_reviewer):
    scenario = machine_translated()
    client = client_for(expert_reviewer)
    page = client.get(reverse("evaluations:scenario-detail", args=[scenario.pk])).content.decode()
    assert "Spanish" in page
    assert "Machine-translated, not reviewed" in page
    assert reverse("evaluations:scenario-translation-review", args=[scenario.pk]) in page

    url = reverse("evaluations:scenario-translation-review", args=[scenario.pk])
    refused = client.post(url, follow=True).content.decode()
    assert "needs a reader of Spanish" in refused
    page = client.post(url, {"reads_language": "on"}, follow=True).content.decode()
    assert "Machine-translated and reviewed" in page
    assert f"Reviewed by {expert_reviewer.email}" in page
    scenario.refresh_from_db()
    assert scenario.translation_reviewed_by == expert_reviewer


def test_a_curator_sees_no_review_button_and_cannot_post(client_for, researcher):
    scenario = machine_translated()
    client = client_for(researcher)
    page = client.get(reverse("evaluations:scenario-detail", args=[scenario.pk])).content.decode()
    url = reverse("evaluations:scenario-translation-review", args=[scenario.pk])
    assert url not in page
    assert client.post(url).status_code == 403
    reader_language_declare(user=researcher, language="es")
    scenario.refresh_from_db()
    assert scenario.translation_provenance == TranslationProvenance.MACHINE


def test_a_situation_has_one_active_scenario_per_age_and_language():
    english = ScenarioFactory(base_index=1, age_context="adult")
    spanish = ScenarioFactory(
        metric_version=english.metric_version, base_index=1, age_context="adult", language="es"
    )
    assert spanish.is_active
    assert english.is_active
    with pytest.raises(IntegrityError), transaction.atomic():
        ScenarioFactory(
            metric_version=english.metric_version, base_index=1, age_context="adult", language="es"
        )


def test_the_generated_set_is_complete_in_the_default_language_alone(researcher):
    configuration = OfflineConfigurationFactory()
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version, configuration=configuration)
    assert scenario_set_complete(metric_version=version)
    spanish_only = current_version(MetricFactory())
    for scenario in scenarios_generate(metric_version=version, configuration=configuration):
        ScenarioFactory(
            metric_version=spanish_only,
            base_index=scenario.base_index,
            age_context=scenario.age_context,
            language="es",
        )
    assert not scenario_set_complete(metric_version=spanish_only)
