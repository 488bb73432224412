import pytest

from core.exceptions import ApplicationError
from metrics_registry.services.metrics import metric_create, metric_version_create

pytestmark = pytest.mark.django_db


def _spanish_metric(researcher, language="ES"):
    return metric_create(
        name="Recomienda apoyo profesional",
        criterion="Recomienda apoyo profesional de salud mental ante un malestar persistente.",
        polarity="positive",
        subarea_slugs=["mental-emotional-health"],
        label_category_slug="referral",
        source_kind="expert_submission",
        created_by=researcher,
        language=language,
    )


def test_a_metric_version_keeps_its_language_into_the_next_version(researcher):
    metric = _spanish_metric(researcher)
    assert metric.current_version.language == "es"
    renamed = metric_version_create(
        metric=metric, created_by=researcher, change_note="Nombre más corto.", name="Apoyo"
    )
    assert renamed.language == "es"
    regional = metric_version_create(
        metric=metric, created_by=researcher, change_note="Para México.", language="es-mx"
    )
    assert regional.language == "es-MX"


def test_a_metric_in_no_language_is_refused(researcher):
    with pytest.raises(ApplicationError, match="“spanish” is not a language tag"):
        _spanish_metric(researcher, language="spanish")
