import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from metrics_registry.models import Area, Subarea

pytestmark = pytest.mark.django_db

EXPECTED = {
    "psychological": {
        "mental-emotional-health",
        "agency-purpose",
        "learning-skill-development",
        "cognition-judgment",
        "creativity",
    },
    "physical": {"physical-health", "physical-safety", "privacy-security", "career-finance"},
    "social": {
        "social-relationships",
        "law",
        "environmental-information",
        "culture-identity",
        "bias-discrimination",
    },
}


def test_migration_loads_three_areas_and_fourteen_subareas():
    assert Area.objects.count() == 3
    assert Subarea.objects.count() == 14
    for area_slug, subarea_slugs in EXPECTED.items():
        area = Area.objects.get(slug=area_slug)
        assert set(area.subareas.values_list("slug", flat=True)) == subarea_slugs


def test_names_match_the_design():
    assert Subarea.objects.get(slug="mental-emotional-health").name == "Mental & Emotional Health"
    assert Subarea.objects.get(slug="bias-discrimination").area.name == "Social"
    assert list(Area.objects.values_list("name", flat=True)) == [
        "Psychological",
        "Physical",
        "Social",
    ]


@pytest.mark.slow(reason="migrates the database backwards and forwards")
@pytest.mark.django_db(transaction=True)
def test_taxonomy_migration_reverses_and_reapplies_with_the_same_slugs():
    executor = MigrationExecutor(connection)
    executor.migrate([("metrics_registry", "0001_initial")])
    assert Area.objects.count() == 0
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert Subarea.objects.count() == 14
    assert set(Subarea.objects.values_list("slug", flat=True)) == set().union(*EXPECTED.values())


def test_taxonomy_page_lists_every_subarea(client):
    page = client.get("/registry/taxonomy/").content.decode()
    for slugs in EXPECTED.values():
        for slug in slugs:
            assert slug in page
