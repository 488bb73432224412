"""Every headline figure says how sure it is in words, with one wording ("plausibly C to B",
"grade C either way", "plausibly 31 % to 52 %"), the numbers kept beside it."""

import html as htmllib
import re

import pytest
from django.urls import reverse
from django.utils import translation

from results.grades import grade_words, percent_words, plausibly
from results.label import CategoryLine, label_profile
from results.models import PassRateSummary
from stats.estimates import Estimate
from tests.results.public_data import add_rubric_responses, published_run

pytestmark = pytest.mark.django_db


def _text(fragment: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_one_wording_for_grades_and_rates():
    wide = Estimate(value=0.77, low=0.61, high=0.86, n=40)
    narrow = Estimate(value=0.62, low=0.605, high=0.64, n=400)
    assert grade_words(wide) == "plausibly C to A−" == plausibly("C", "A−")
    assert grade_words(narrow) == "grade C either way"
    assert percent_words(wide) == "plausibly 61 % to 86 %"
    assert percent_words(Estimate.insufficient(n=1)) == "too few to say"
    line = CategoryLine(None, narrow, "C", False, 2)
    assert line.sureness == "grade C either way"
    assert line.grade_text == "C"  # the grade alone where its interval stays in its band


def test_the_words_are_translatable():
    # No catalogue ships yet: the words go through gettext, and an active language with no
    # catalogue falls back to them unchanged.
    with translation.override("fr"):
        assert grade_words(Estimate(value=0.62, low=0.605, high=0.64, n=400)) == (
            "grade C either way"
        )


def test_home_findings_give_the_ends_of_their_range_how_sure_they_are(client):
    run = published_run(n_metrics=2)
    html = client.get(reverse("core:home")).content.decode()
    findings = [_text(f) for f in re.findall(r'data-testid="finding">(.*?)</li>', html, re.S)]
    assert len(findings) == 2
    for polarity, finding in zip(("negative", "positive"), findings, strict=True):
        rows = PassRateSummary.objects.filter(
            run=run, level="overall", age_context="all", polarity=polarity
        ).select_related("target")
        for row in rows:
            e = row.estimate
            assert f"{e.value * 100:.0f} % ({row.target.name}, {percent_words(e)})" in finding


def test_every_label_row_says_how_sure_its_grade_is(client):
    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    profile = label_profile(run=run, target=target)
    html = client.get(reverse("results:label", args=[target.pk]), {"run": run.pk}).content
    rows = re.findall(r'data-testid="label-line">(.*?)</tr>', html.decode(), re.S)
    assert len(rows) == len(profile.lines)
    for line in profile.lines:
        row = next(_text(r) for r in rows if f">{line.category.name}</a>" in r)
        assert line.sureness[0].upper() + line.sureness[1:] in row
        assert line.sureness.startswith(("plausibly", "grade"))


def test_explore_says_how_sure_each_figure_of_its_table_is(client):
    run = published_run(n_metrics=4)
    html = client.get(reverse("results:explore"), {"run": run.pk}).content.decode()
    table = html.split('data-testid="explore-table"')[1].split("</table>")[0]
    cells = re.findall(r"<td>(.*?)</td>", table, re.S)
    tested = [c for c in cells if 'data-estimate-low="0' in c or 'data-estimate-low="1' in c]
    assert tested
    for cell in tested:
        low = float(re.search(r'data-estimate-low="([^"]+)"', cell).group(1))
        high = float(re.search(r'data-estimate-high="([^"]+)"', cell).group(1))
        words = re.search(r'data-testid="estimate-words">(.*?)</span>', cell).group(1)
        assert words == f"Plausibly {low * 100:.0f} % to {high * 100:.0f} %"


def test_the_rubric_page_says_how_sure_each_overall_score_is_and_keeps_the_sd(client):
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=6)
    html = client.get(reverse("results:rubrics")).content.decode()
    assert "Bootstrap SD" not in html
    table = html.split('data-testid="rubric-overall"')[1].split("</table>")[0]
    sure = re.findall(r'<td data-testid="rubric-sureness"([^>]*)>(.*?)</td>', table, re.S)
    assert len(sure) == run.targets.count()
    for attributes, words in sure:
        assert re.fullmatch(r"plausibly \d+ % to \d+ % of the points", words), words
        assert "Bootstrap standard deviation (HealthBench's): 0." in attributes
        assert "data-bootstrap-sd=" in attributes
