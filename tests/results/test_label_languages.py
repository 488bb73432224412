"""The label's files per language: the stored SVG, PNG and PDF of a run whose conversations
span several languages exist for the pooled figures and for each language's; the label page
with ``?lang=`` offers that language's PNG and PDF; and a Spanish reader's SVG has its words
in Spanish."""

import pytest
from django.conf import settings
from django.core.cache import caches
from django.urls import reverse
from django.utils import translation

from results.label import LABEL_AGES
from results.label_files import label_files_render
from results.published_pages import published_page_addresses
from results.services import results_refresh
from tests.results.language_runs import bilingual_run
from tests.results.test_label_export import drawn  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="refreshes a bilingual run and draws its label files"),
]


@pytest.fixture
def run():
    run = bilingual_run(metrics=2, models=2, spanish_drop=0.35, seed=3)
    results_refresh(run=run, n_resamples=20)
    return run


def test_each_language_has_its_label_files_beside_the_pooled_ones(run, drawn, tmp_path):  # noqa: F811
    targets = list(run.targets.order_by("pk"))
    scopes = ("", "-en", "-es")
    per_label = 3 + 2 * (len(settings.LANGUAGES) - 1)  # + a PNG and a PDF per other reader
    assert label_files_render(run=run) == len(targets) * len(LABEL_AGES) * len(scopes) * per_label
    for target in targets:
        for age in LABEL_AGES:
            for scope in scopes:
                for fmt in ("svg", "png", "pdf"):
                    path = tmp_path / "labels" / f"run{run.pk}-target{target.pk}-{age}{scope}.{fmt}"
                    assert path.exists(), path.name
    target = targets[0]
    folder = tmp_path / "labels"
    spanish_png = (folder / f"run{run.pk}-target{target.pk}-all-es.png").read_bytes().decode()
    assert "conversations in Spanish only" in spanish_png
    assert "only" not in (folder / f"run{run.pk}-target{target.pk}-all.png").read_bytes().decode()
    spanish_svg = (folder / f"run{run.pk}-target{target.pk}-all-es.svg").read_text()
    assert "conversations in Spanish only" in spanish_svg
    # Spanish and pooled figures differ: different pictures.
    pooled_svg = (folder / f"run{run.pk}-target{target.pk}-all.svg").read_text()
    assert spanish_svg != pooled_svg
    # The stored words are the site's default language whatever the worker's.
    with translation.override("es"):
        label_files_render(run=run)
    assert "Beneficial behaviour promoted" in pooled_svg
    assert (folder / f"run{run.pk}-target{target.pk}-all.svg").read_text() == pooled_svg


def test_the_label_page_in_one_language_offers_that_languages_png_and_pdf(
    run,
    client,
    drawn,  # noqa: F811
    tmp_path,
):
    target = run.targets.order_by("pk").first()
    label_files_render(run=run)
    html = client.get(
        reverse("results:label", args=[target.pk]), {"run": run.pk, "lang": "es"}
    ).content.decode()
    png = reverse("results:label-png", args=[target.pk])
    assert f'href="{png}?run={run.pk}&amp;lang=es&amp;download=1"' in html
    assert 'data-testid="download-pdf"' in html
    folder = tmp_path / "labels"
    for fmt in ("png", "pdf"):
        (folder / f"run{run.pk}-target{target.pk}-all-es.{fmt}").write_bytes(b"es " + fmt.encode())
        (folder / f"run{run.pk}-target{target.pk}-all.{fmt}").write_bytes(b"all " + fmt.encode())
        url = reverse(f"results:label-{fmt}", args=[target.pk])
        caches["pages"].clear()
        spanish = client.get(url, {"run": run.pk, "lang": "es", "download": "1"})
        assert spanish.content == b"es " + fmt.encode()
        assert f"-{target.pk}-es.{fmt}" in spanish["Content-Disposition"]
        assert client.get(url, {"run": run.pk}).content == b"all " + fmt.encode()
    # The published pages store each language's images as answers too.
    addresses = published_page_addresses(run, default=False)
    assert f"{png}?run={run.pk}&lang=es" in addresses
    assert f"{png}?run={run.pk}&age=teen&lang=en" in addresses


def test_a_spanish_reader_gets_the_svg_in_spanish(run, client, drawn):  # noqa: F811
    target = run.targets.order_by("pk").first()
    label_files_render(run=run)  # the stored SVG, in English
    english = client.get(reverse("results:label-svg", args=[target.pk]), {"run": run.pk})
    assert "Beneficial behaviour promoted" in english.content.decode()
    with translation.override("es"):
        url = reverse("results:label-svg", args=[target.pk])
    assert url.startswith("/es/")
    for address, cookies in ((url, {}), (reverse("results:label-svg", args=[target.pk]), {"es"})):
        client.cookies.clear()
        if cookies:
            client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"  # the language switch
        body = client.get(address, {"run": run.pk, "lang": "es"}).content.decode()
        assert "Comportamiento beneficioso promovido" in body
        assert "Beneficial behaviour promoted" not in body
        assert "Etiqueta nutricional de IA" in body
        assert "conversaciones en español solamente" in body
        assert "mostrado para perfiles de adolescentes y de adultos" in body
        pooled = client.get(address, {"run": run.pk}).content.decode()
        assert "Comportamiento dañino evitado" in pooled
        assert "Behaviour under controlled stress tests" not in pooled
        assert "metrics ·" not in pooled


def test_the_png_and_pdf_are_stored_worded_for_each_reader_language(run, drawn, tmp_path):  # noqa: F811
    targets = list(run.targets.order_by("pk"))
    label_files_render(run=run)
    folder = tmp_path / "labels"
    for target in targets:
        for age in LABEL_AGES:
            for scope in ("", "-en", "-es"):
                for fmt in ("png", "pdf"):
                    name = f"run{run.pk}-target{target.pk}-{age}{scope}@es.{fmt}"
                    assert (folder / name).exists(), name
                # The SVG is drawn from its template for a reader of another language.
                assert not (folder / f"run{run.pk}-target{target.pk}-{age}{scope}@es.svg").exists()
    # The fake drawing writes each file's title: the Spanish reader's in Spanish.
    stem = f"run{run.pk}-target{targets[0].pk}-all-es"
    english = (folder / f"{stem}.png").read_bytes().decode()
    spanish = (folder / f"{stem}@es.png").read_bytes().decode()
    assert "AI Nutrition Label" in english
    assert "conversations in Spanish only" in english
    assert "AI Nutrition Label" not in spanish
    assert "conversaciones en español solamente" in spanish, spanish
    assert "Etiqueta" in (folder / f"{stem}@es.pdf").read_bytes().decode()


def test_the_spanish_label_page_offers_the_spanish_worded_png_and_pdf(run, client, drawn, tmp_path):  # noqa: F811
    target = run.targets.order_by("pk").first()
    label_files_render(run=run)
    with translation.override("es"):
        page = reverse("results:label", args=[target.pk])
        png = reverse("results:label-png", args=[target.pk])
        pdf = reverse("results:label-pdf", args=[target.pk])
    html = client.get(page, {"run": run.pk}).content.decode()
    assert f'href="{png}?run={run.pk}&amp;download=1"' in html
    assert f'href="{pdf}?run={run.pk}&amp;download=1"' in html
    folder = tmp_path / "labels"
    for fmt, url in (("png", png), ("pdf", pdf)):
        stored = (folder / f"run{run.pk}-target{target.pk}-all@es.{fmt}").read_bytes()
        assert client.get(url, {"run": run.pk}).content == stored
        with translation.override("en"):  # a request leaves its language active
            plain = reverse(f"results:label-{fmt}", args=[target.pk])
        english = client.get(plain, {"run": run.pk})
        assert english.content == (folder / f"run{run.pk}-target{target.pk}-all.{fmt}").read_bytes()
        assert english.content != stored
