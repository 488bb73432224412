"""Which official run public pages show by default: the release's headline run."""

import pytest
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.models import Conversation
from evaluations.services.official import run_set_headline, run_set_official
from results.selectors import public_run_default, public_run_for_target, public_runs
from results.services import results_refresh
from tests.results.factories import completed_run
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _small_run(big, *, official=True):
    target = big.targets.order_by("name").first()
    scen = Conversation.objects.filter(run=big, target=target).first().scenario
    run = completed_run(
        targets=[target], versions=[scen.metric_version], outcomes=[(scen, target, True)],
        publish_as=None, name="Small run",
    )  # fmt: skip
    run.release = big.release
    run.is_official = official
    run.save(update_fields=["release", "is_official"])
    results_refresh(run=run, n_resamples=50)
    return run


def test_a_later_smaller_official_run_does_not_replace_the_most_complete_one(maintainer):
    big = published_run()
    small = _small_run(big)
    assert small.pk > big.pk
    assert small.conversations_completed < big.conversations_completed
    assert public_run_default() == big
    assert list(public_runs()) == [big, small]


def test_a_maintainer_marks_one_headline_run_per_release(maintainer):
    big = published_run()
    small = _small_run(big)
    run_set_headline(run=small, headline=True, changed_by=maintainer)
    assert public_run_default() == small
    run_set_headline(run=big, headline=True, changed_by=maintainer)
    small.refresh_from_db()
    assert not small.is_headline
    assert public_run_default() == big
    # Withdrawing the headline run takes the mark with it; the next most complete is shown.
    run_set_official(run=big, official=False, changed_by=maintainer)
    big.refresh_from_db()
    assert not big.is_headline
    assert public_run_default() == small


def test_only_an_official_run_can_be_the_headline(maintainer):
    big = published_run()
    small = _small_run(big, official=False)
    with pytest.raises(ApplicationError, match="official"):
        run_set_headline(run=small, headline=True, changed_by=maintainer)


def test_a_label_without_run_resolves_to_the_headline_run_holding_that_model(client, maintainer):
    big = published_run()
    small = _small_run(big)
    run_set_headline(run=small, headline=True, changed_by=maintainer)
    inside, outside = (
        small.targets.get(),
        big.targets.exclude(pk__in=small.targets.values("pk")).get(),
    )
    assert public_run_for_target(inside.pk) == small
    assert public_run_for_target(outside.pk) == big
    for target in (inside, outside):
        response = client.get(reverse("results:label", args=[target.pk]))
        assert response.status_code == 200
    assert (
        f"?run={big.pk}" in client.get(reverse("results:label", args=[outside.pk])).content.decode()
    )


def test_the_headline_control_is_for_maintainers(client, researcher, maintainer):
    big = published_run()
    url = reverse("evaluations:run-official", args=[big.pk])
    client.force_login(researcher)
    assert client.post(url, {"headline": "1"}).status_code == 403
    client.force_login(maintainer)
    client.post(url, {"headline": "1"})
    big.refresh_from_db()
    assert big.is_headline
