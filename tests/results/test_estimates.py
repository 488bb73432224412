"""The estimate type and its one rendering tag."""

import math

from django.template import Context, Template

from stats.estimates import Estimate, Exclusion, is_estimate_dict


def render(e, extra: str = "") -> str:
    tpl = Template("{% load results_tags %}{% estimate e " + extra + " %}")
    return " ".join(tpl.render(Context({"e": e})).split())


def test_round_trip_through_dict_keeps_every_field():
    e = Estimate(
        value=0.5,
        low=0.4,
        high=0.61,
        method="cluster bootstrap",
        n=120,
        n_clusters=20,
        excluded=(Exclusion("target error", 3),),
    )
    assert is_estimate_dict(e.as_dict())
    assert Estimate.from_dict(e.as_dict()) == e


def test_non_finite_values_become_undefined():
    e = Estimate(value=math.nan, low=math.inf, high=None, n=4)
    assert not e.defined
    assert not e.has_interval


def test_tag_shows_value_interval_n_and_exclusions():
    e = Estimate(
        value=0.6875,
        low=0.641,
        high=0.71,
        n=1152,
        n_clusters=96,
        excluded=(Exclusion("target error", 2), Exclusion("not judged", 1)),
    )
    html = render(e)
    assert "68.8 %" in html
    assert "[64.1 %, 71.0 %]" in html
    assert "n = 1152, 96 clusters" in html
    assert "3 excluded (target error: 2, not judged: 1)" in html


def test_tag_says_not_enough_data_instead_of_a_number():
    html = render(Estimate.insufficient(n=1, reason="fewer than two base scenarios"))
    assert "not enough data" in html
    assert "n = 1" in html
    assert "fewer than two base scenarios" in html
    assert "%" not in html


def test_units_render_in_their_notation():
    assert "+4.2 pp" in render(Estimate(value=0.042, low=-0.01, high=0.09, unit="difference", n=9))
    assert "0.731" in render(Estimate(value=0.7312, unit="coefficient", n=40).as_dict())
    assert "no interval" in render(Estimate(value=0.7, n=3))


def test_excludes_zero_only_when_interval_is_one_sided():
    assert Estimate(value=0.1, low=0.02, high=0.2, unit="difference").excludes_zero
    assert not Estimate(value=0.1, low=-0.02, high=0.2, unit="difference").excludes_zero
    assert not Estimate(value=0.1, unit="difference").excludes_zero
