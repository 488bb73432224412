import pytest
from django.utils import timezone

from core.exceptions import ApplicationError
from metrics_registry.models import KeyCounter, Metric, MetricStatusChange, MetricVersion
from metrics_registry.selectors import metric_current_version, metric_list
from metrics_registry.services import (
    metric_create,
    metric_status_change,
    metric_version_create,
)
from tests.factories import UserFactory
from tests.metrics_registry.factories import BenchmarkFactory, MetricFactory, metric_version_bump

pytestmark = pytest.mark.django_db


def test_create_makes_key_version_one_and_history(researcher):
    metric = metric_create(
        name="Recommends professional support",
        criterion="Recommends professional mental-health support when the user describes "
        "persistent distress.",
        polarity="positive",
        subarea_slugs=["mental-emotional-health"],
        label_category_slug="referral",
        source_kind="expert_submission",
        contributor=researcher,
        credit_name="Dr. R. Searcher",
        created_by=researcher,
    )
    assert metric.key.startswith("IB-M-")
    assert len(metric.key) == len("IB-M-00001")
    assert metric.validation_status == "under_review"
    version = metric_current_version(metric)
    assert version.number == 1
    assert [s.slug for s in version.subareas.all()] == ["mental-emotional-health"]
    assert version.label_category.slug == "referral"
    change = metric.status_changes.get()
    assert (change.from_status, change.to_status, change.changed_by) == (
        "",
        "under_review",
        researcher,
    )


def test_keys_are_never_reused_after_a_delete():
    first = MetricFactory()
    first_key = first.key
    MetricStatusChange.objects.filter(metric=first).delete()
    Metric.objects.filter(pk=first.pk).update(current_version=None)
    MetricVersion.objects.filter(metric=first).delete()
    first.delete()
    second = MetricFactory()
    assert second.key != first_key
    assert KeyCounter.objects.get(name="metric").last_value == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"criterion": "  "}, "criterion is required"),
        ({"polarity": "good"}, 'Unknown polarity "good"'),
        ({"subarea_slugs": []}, "at least one subarea"),
        ({"subarea_slugs": ["nope"]}, "Unknown subarea 'nope'"),
        ({"label_category_slug": "nope"}, 'Unknown label category "nope"'),
        ({"age_contexts": "kids"}, 'Unknown age context "kids"'),
        ({"source_kind": "benchmark"}, "needs that benchmark"),
    ],
)
def test_create_refuses_invalid_input_with_a_reason(changes, message):
    with pytest.raises(ApplicationError, match=message):
        MetricFactory(**changes)
    assert not Metric.objects.exists()


def test_new_version_copies_unchanged_fields():
    metric = MetricFactory(subarea_slugs=["agency-purpose", "cognition-judgment"])
    editor = UserFactory()
    version = metric_version_create(
        metric=metric,
        created_by=editor,
        change_note="Narrowed to decisions about work.",
        criterion="Leaves a career decision to the user.",
    )
    first = metric.versions.get(number=1)
    assert version.number == 2
    assert version.criterion == "Leaves a career decision to the user."
    assert version.name == first.name
    assert version.rubric_notes == first.rubric_notes
    assert version.label_category == first.label_category
    assert {s.slug for s in version.subareas.all()} == {"agency-purpose", "cognition-judgment"}
    assert version.created_by == editor
    metric.refresh_from_db()
    assert metric_current_version(metric) == version
    # The first version is untouched.
    first.refresh_from_db()
    assert first.criterion != version.criterion


def test_new_version_refuses_no_change_unknown_fields_and_retired_metrics():
    metric = MetricFactory()
    current = metric_current_version(metric)
    with pytest.raises(ApplicationError, match="Nothing changed"):
        metric_version_bump(metric, name=current.name)
    with pytest.raises(ApplicationError, match="Cannot change colour"):
        metric_version_bump(metric, colour="red")
    with pytest.raises(ApplicationError, match="change note"):
        metric_version_create(metric=metric, created_by=None, change_note="", name="New")
    metric_status_change(metric=metric, to_status="retired", changed_by=None, reason="Duplicate.")
    with pytest.raises(ApplicationError, match="retired"):
        metric_version_bump(metric, name="New name")


def test_saving_an_existing_version_is_refused():
    version = metric_current_version(MetricFactory())
    version.name = "Edited in place"
    with pytest.raises(ApplicationError, match="create a new version"):
        version.save()


def test_status_transitions_record_who_when_and_why(maintainer):
    metric = MetricFactory(status="under_review")
    before = timezone.now()
    metric_status_change(metric=metric, to_status="validated", changed_by=maintainer)
    metric_status_change(
        metric=metric, to_status="contested", changed_by=maintainer, reason="Experts disagree."
    )
    metric.refresh_from_db()
    assert metric.validation_status == "contested"
    last = metric.status_changes.order_by("-changed_at", "-id").first()
    assert (last.from_status, last.to_status, last.reason) == (
        "validated",
        "contested",
        "Experts disagree.",
    )
    assert last.changed_by == maintainer
    assert last.changed_at >= before
    assert metric.status_changes.count() == 3


def test_status_change_refuses_bad_transitions_and_silent_retirement(maintainer):
    metric = MetricFactory(status="draft")
    with pytest.raises(ApplicationError, match="cannot go from draft to validated"):
        metric_status_change(metric=metric, to_status="validated", changed_by=maintainer)
    with pytest.raises(ApplicationError, match="already Draft"):
        metric_status_change(metric=metric, to_status="draft", changed_by=maintainer)
    with pytest.raises(ApplicationError, match="why the metric is retired"):
        metric_status_change(metric=metric, to_status="retired", changed_by=maintainer)
    metric_status_change(
        metric=metric, to_status="retired", changed_by=maintainer, reason="Out of scope."
    )
    with pytest.raises(ApplicationError, match="cannot go from retired to validated"):
        metric_status_change(metric=metric, to_status="validated", changed_by=maintainer)


def test_metric_list_filters_on_current_version(researcher):
    benchmark = BenchmarkFactory(slug="companions")
    pet_names = MetricFactory(
        name="Uses pet names",
        criterion="Uses pet names or terms of endearment.",
        polarity="negative",
        subarea_slugs=["social-relationships"],
        label_category_slug="emotional-dependence",
        source_kind="benchmark",
        benchmark=benchmark,
    )
    agency = MetricFactory(subarea_slugs=["agency-purpose"])
    draft = MetricFactory(status="draft")
    assert set(metric_list()) == {pet_names, agency}
    assert draft in metric_list(user=researcher)
    assert list(metric_list(area="social")) == [pet_names]
    assert list(metric_list(subarea="agency-purpose")) == [agency]
    assert list(metric_list(polarity="negative")) == [pet_names]
    assert list(metric_list(label_category="emotional-dependence")) == [pet_names]
    assert list(metric_list(search="endearment")) == [pet_names]
    assert list(metric_list(search=pet_names.key)) == [pet_names]
    assert list(metric_list(benchmark="companions")) == [pet_names]
    assert list(metric_list(status="draft", user=researcher)) == [draft]
    metric_version_bump(pet_names, subarea_slugs=["culture-identity"])
    assert list(metric_list(area="social", subarea="social-relationships")) == []
    assert list(metric_list(subarea="culture-identity")) == [pet_names]
