"""The interface in the reader's language: chosen with the footer's switcher (a cookie) or the
browser's Accept-Language, on the same unprefixed URLs, and cached once per language; and the
Spanish catalogue kept complete and compiled."""

import gettext
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import translation

from tests.core.template_text import templates_bare_text
from tests.results.public_data import published_run

CATALOGUE = Path(settings.BASE_DIR) / "locale" / "es" / "LC_MESSAGES" / "django.po"
COMPILED = CATALOGUE.with_suffix(".mo")

# The pages translated in full: the frame (layout, navigation, footer, language switcher), the
# home page, the Nutrition Label with its parts, and the public results pages below. Any string
# of theirs must be translated.
TRANSLATED_SOURCES = (
    "core/navigation.py",
    "templates/base.html",
    "templates/core/home.html",
    "templates/403.html",
    "templates/404.html",
    "templates/core/bad_request.html",
    "templates/core/unavailable.html",
    "core/roles.py",
    "core/middleware.py",
    "templates/results/label.html",
    "templates/results/_label_",  # every partial of the label
    "templates/results/_plain_lead.html",
    "templates/results/_run_banner.html",
    "templates/results/_estimate.html",
    "templates/results/_offline_notice.html",
    "templates/llm/_offline_badge.html",
    # The public results pages translated next (tests/results/test_spanish_pages.py).
    "templates/results/conversation.html",
    "templates/results/metric_detail.html",
    "templates/results/metric_list.html",
    "templates/results/label_compare.html",
    "templates/results/label_category.html",
    "templates/results/anchor_study.html",
    "templates/results/release_expert_",
    "templates/results/_expert_figures_",  # the table and its per-metric part
    "results/services/calibration_texts.py",
    "templates/results/run_conversations.html",
    "templates/results/_no_results.html",
    "templates/results/_metric_judge_trust.html",
    "templates/results/_judge_trust.html",
    "templates/results/_explore_judge_trust.html",
    "templates/results/_sunburst.html",
    "templates/results/_reask_effects.html",
    "templates/results/_methodology_",  # every section partial of the methodology page
    "templates/metrics_registry/_metric_browser.html",
    "templates/metrics_registry/_pagination.html",
    "templates/metrics_registry/_polarity.html",
    "results/plain.py",
    "results/plain_labels.py",
    "results/method_words.py",
    "templates/evaluations/_scenario_language.html",
    "llm/offline.py",
    # Every other page an anonymous visitor can open (tests/security/test_access_matrix.py),
    # with what it includes and the Python that writes its sentences.
    "templates/_pagination.html",
    "templates/core/api_docs.html",
    "templates/demo/_seed_banner.html",
    "demo/progress.py",
    "templates/submissions/contact",  # the contact form and its thanks
    "templates/metrics_registry/taxonomy.html",
    "templates/metrics_registry/metric_list.html",
    "templates/metrics_registry/metric_detail.html",
    "templates/metrics_registry/_status.html",
    "templates/metrics_registry/release_list.html",
    "templates/metrics_registry/release_detail.html",
    "templates/metrics_registry/_changelog.html",
    "metrics_registry/plain.py",
    "templates/results/explore.html",
    "templates/results/methodology.html",
    "templates/results/label_overview.html",
    "templates/results/label_audience.html",
    "templates/results/label_compare_choose.html",
    "templates/results/rubrics/",  # the rubric results and their partials
    "templates/results/_calibration_steps.html",
    "templates/results/_cost_amount.html",
    "templates/results/_judge_gap.html",
    "templates/results/_language_gap.html",
    "templates/results/_language_switch.html",
    "templates/results/_lead_how.html",
    "templates/results/_scenario_language.html",
    "templates/results/_synthetic_badge.html",
    "templates/results/_transcript_source.html",
    "results/audiences.py",
    "results/findings.py",
    "results/grades.py",
    # The rater's screens: dashboard, queue list, the rating screen with each kind's item and
    # questions (tests/review/test_rater_screens_spanish.py).
    "templates/core/dashboard.html",
    "templates/review/ratingqueue_rater_list.html",
    "templates/review/rate.html",
    "templates/review/_languages_read.html",
    "templates/review/items/",  # every kind's item partial
    "review/kinds/",  # questions, choices and what the adapters show
    "review/models.py",
    "core/templatetags/impactbench.py",
)


def _label_url(run) -> str:
    return reverse("results:label", args=[run.targets.order_by("name").first().pk])


@pytest.mark.django_db
@pytest.mark.slow(reason="publishes a run and renders its label, the heaviest public page, twice")
def test_the_page_cache_serves_each_language_its_own_page(client):
    url = _label_url(published_run())
    spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es")
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert '<html lang="es"' in spanish.content.decode()
    # Without the language in the key this would be the Spanish page, cached a moment ago.
    assert '<html lang="en"' in english.content.decode()
    assert "Etiqueta nutricional de IA" not in english.content.decode()
    assert spanish["ETag"] != english["ETag"]
    assert "Accept-Language" in english["Vary"]
    assert "Cookie" in english["Vary"]
    # Each is then served from the cache, still in its own language.
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="es").content == spanish.content
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="en").content == english.content
    # A language not offered is English, under English's key: no entry per header value.
    assert client.get(url, HTTP_ACCEPT_LANGUAGE="de-AT,xx;q=0.5")["ETag"] == english["ETag"]


@pytest.mark.django_db
def test_accept_language_spanish_renders_the_home_page_and_the_label_in_spanish(client):
    run = published_run()
    home = client.get(reverse("core:home"), HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()
    assert '<html lang="es"' in home
    assert "¿Esta IA apoya a las personas que la usan?" in home
    assert " Explorar</a>" in home  # the navigation
    assert "Sin puntuación única ni «mejor modelo»." in home  # the footer
    assert '<label for="language-select">Idioma</label>' in home
    assert "Does this AI support the people who use it?" not in home
    label = client.get(_label_url(run), HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert '<h1 class="h3">Etiqueta nutricional de IA</h1>' in label
    assert "Comportamiento beneficioso promovido" in label
    assert "Comportamiento dañino evitado" in label
    assert "Cómo se asignan las calificaciones" in label
    assert "Se muestra para perfiles de adolescentes y de adultos." in label
    assert "Beneficial behaviour promoted" not in label


@pytest.mark.django_db
def test_the_switcher_sets_spanish_without_a_csrf_token_and_goes_to_the_spanish_address():
    run = published_run()
    client = Client(enforce_csrf_checks=True)  # as a browser: the footer's form has no token
    home = client.get(reverse("core:home")).content.decode()
    assert 'data-testid="language-switcher"' in home
    assert '<label for="language-select">Language</label>' in home
    assert f'action="{reverse("set_language")}"' in home
    label_url = _label_url(run)
    answer = client.post(reverse("set_language"), {"language": "es", "next": label_url})
    assert answer.status_code == 302
    assert answer["Location"] == "/es" + label_url  # the page's Spanish address
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "es"
    for url in (answer["Location"], label_url):  # the plain address follows the choice
        label = client.get(url).content.decode()
        assert '<html lang="es"' in label
        assert "Comportamiento beneficioso promovido" in label
        assert '<option value="es" lang="es" selected>Español</option>' in label
    home = client.get(reverse("core:home")).content.decode()
    assert "¿Esta IA apoya a las personas que la usan?" in home
    # And back: from the Spanish address to the plain one, now in English.
    back = client.post(reverse("set_language"), {"language": "en", "next": "/es" + label_url})
    assert back["Location"] == label_url
    assert "Does this AI support the people who use it?" in client.get("/").content.decode()


@pytest.mark.django_db
def test_a_prefixed_address_is_in_its_language_whatever_the_reader_chose():
    label_url = _label_url(published_run())  # reversed in English: the plain address
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    spanish = client.get("/es" + label_url, HTTP_ACCEPT_LANGUAGE="en")
    page = spanish.content.decode()
    assert spanish.status_code == 200
    assert '<html lang="es"' in page
    assert "Comportamiento beneficioso promovido" in page
    # Its links stay in Spanish; the page does not vary with the reader's browser.
    with translation.override("es"):
        assert f'href="{reverse("results:explore")}' in page  # reversed as /es/...
    assert 'href="/es/' in page
    assert "Accept-Language" not in spanish.get("Vary", "")
    plain = client.get(label_url, HTTP_ACCEPT_LANGUAGE="es")
    assert '<html lang="en"' in plain.content.decode()  # the cookie's choice beats the browser
    assert "Accept-Language" in plain["Vary"]


@pytest.mark.django_db
def test_every_page_links_its_addresses_in_each_language():
    run = published_run()
    url = _label_url(run) + "?age=teen"
    for address in (url, "/es" + url):
        page = Client().get(address).content.decode()
        assert f'<link rel="alternate" hreflang="en" href="{settings.SITE_URL}{url}">' in page
        assert f'<link rel="alternate" hreflang="es" href="{settings.SITE_URL}/es{url}">' in page
        assert f'hreflang="x-default" href="{settings.SITE_URL}{url}"' in page


@pytest.mark.django_db
def test_machine_addresses_have_no_language_prefix():
    client = Client()
    assert client.get("/es/api/schema/").status_code == 404
    assert client.get("/en" + reverse("results:explore")).status_code == 404
    assert client.get("/es" + reverse("results:explore")).status_code == 200
    assert client.get("/es/health/").status_code in (200, 503)  # a page like any other


@pytest.mark.django_db
def test_english_is_the_default_and_an_unknown_language_falls_back_to_it(client):
    home = client.get(reverse("core:home")).content.decode()
    assert '<html lang="en"' in home
    assert "Does this AI support the people who use it?" in home
    page = client.get(reverse("core:home"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="en"' in page


def _gettext_tools() -> None:
    if shutil.which("xgettext") and shutil.which("msgcmp"):
        return
    if os.environ.get("REQUIRE_GETTEXT"):
        pytest.fail(
            "gettext's tools (xgettext, msgfmt, msgcmp) are needed: apt-get install gettext"
        )
    pytest.skip("gettext's tools are not installed")


def _source_copy(target: Path) -> None:
    """The project's sources, without the virtualenv, runtime data, caches or catalogue."""
    skip = {".venv", "var", "node_modules", "static", "locale", "benchmarks"}
    for path in Path(settings.BASE_DIR).rglob("*"):
        relative = path.relative_to(settings.BASE_DIR)
        if relative.parts[0] in skip or any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_file():  # data files too: the apps read some at start-up
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / relative)


@pytest.mark.slow(reason="runs makemessages over a copy of the whole project")
def test_every_translatable_string_is_in_the_committed_catalogue(tmp_path):
    _gettext_tools()
    _source_copy(tmp_path)
    (tmp_path / "locale").mkdir()
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "impactbench_site.settings.test"}
    made = subprocess.run(  # noqa: S603 - a fixed command on a copy of our own sources
        [sys.executable, "manage.py", "makemessages", "-l", "es", "--no-obsolete"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    fresh = tmp_path / "locale" / "es" / "LC_MESSAGES" / "django.po"
    # Fails, naming each one, when a string of the templates or code is not in django.po.
    compared = subprocess.run(  # noqa: S603
        ["msgcmp", "--use-untranslated", str(CATALOGUE), str(fresh)],  # noqa: S607
        capture_output=True,
        text=True,
    )
    assert compared.returncode == 0, (
        "Strings missing from locale/es/LC_MESSAGES/django.po; run makemessages and translate "
        "them (docs/i18n.md):\n\n" + "\n\n".join(_entries_missing(fresh, compared.stderr))
    )


def _entries_missing(fresh: Path, report: str) -> list[str]:
    """The entries msgcmp reports by line number (``fresh.po:LINE: this message is used but
    not defined``), written out: the temporary file is gone when the failure is read."""
    lines = fresh.read_text(encoding="utf-8").splitlines()
    found = []
    for match in re.finditer(rf"{re.escape(str(fresh))}:(\d+): this message is used", report):
        start = end = int(match.group(1)) - 1
        while start > 0 and lines[start - 1].strip():
            start -= 1
        while end < len(lines) and lines[end].strip():
            end += 1
        found.append("\n".join(lines[start:end]))
    return found or [report]


def test_the_translated_pages_have_every_string_translated():
    _gettext_tools()
    untranslated = subprocess.run(  # noqa: S603
        ["msgattrib", "--untranslated", "--no-obsolete", str(CATALOGUE)],  # noqa: S607
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entries = untranslated.split("\n\n")
    missing = [
        entry
        for entry in entries
        if any(
            source in line
            for line in entry.splitlines()
            if line.startswith("#:")
            for source in TRANSLATED_SOURCES
        )
    ]
    assert missing == [], "Translate these entries of django.po:\n" + "\n\n".join(missing)


def test_the_compiled_catalogue_holds_what_the_catalogue_says(tmp_path):
    """django.mo is committed (a fresh clone needs no gettext to serve Spanish): it must be
    compiled from the django.po beside it."""
    _gettext_tools()
    compiled = tmp_path / "django.mo"
    subprocess.run(  # noqa: S603
        ["msgfmt", "--check", "-o", str(compiled), str(CATALOGUE)],  # noqa: S607
        check=True,
        capture_output=True,
    )
    with compiled.open("rb") as fresh, COMPILED.open("rb") as committed:
        assert gettext.GNUTranslations(committed)._catalog == (  # type: ignore[attr-defined]
            gettext.GNUTranslations(fresh)._catalog  # type: ignore[attr-defined]
        ), "Run manage.py compilemessages and commit locale/es/LC_MESSAGES/django.mo"


@pytest.mark.django_db
def test_html_dir_follows_the_language_and_is_rtl_for_a_right_to_left_one(client, settings):
    assert 'dir="ltr"' in client.get("/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    # Arabic is not offered yet; once it is (LANGUAGES), its pages are written right to left.
    settings.LANGUAGES = [*settings.LANGUAGES, ("ar", "العربية"), ("fa", "فارسی")]
    for code in ("ar", "fa"):
        page = client.get("/", HTTP_ACCEPT_LANGUAGE=code).content.decode()
        assert f'<html lang="{code}" dir="rtl"' in page
    assert '<html lang="en" dir="ltr"' in client.get("/").content.decode()


CONTACT = {
    "kind": "contact",
    "email": "sara@example.org",
    "affiliation": "",
    "benchmark_url": "",
    "website": "",
}


@pytest.mark.django_db
def test_arabic_and_persian_text_passes_the_contact_form_that_refuses_control_characters(client):
    from submissions.models import Enquiry

    url = reverse("contact:form")
    # The refusals stay: a C0 control character, and a bidi override in the one-line name.
    control = client.post(url, {**CONTACT, "name": "Sara\x07", "message": "Hola"})
    assert "Contains a control character (U+0007" in control.content.decode()
    spoofed = client.post(url, {**CONTACT, "name": "Sara \u202egpj.exe", "message": "Hola"})
    assert "invisible direction" in spoofed.content.decode()
    assert not Enquiry.objects.exists()
    # Right-to-left scripts need no control character: Arabic as typed, Persian with the
    # zero-width non-joiner (U+200C) its spelling uses.
    arabic = "سارة الأحمد"
    persian = "می\u200cخواهم دربارهٔ این معیار بیشتر بدانم."
    response = client.post(url, {**CONTACT, "name": arabic, "message": persian})
    assert response.status_code == 200
    enquiry = Enquiry.objects.get()
    assert (enquiry.name, enquiry.message) == (arabic, persian)


@pytest.mark.django_db
@pytest.mark.slow(reason="renders every public page in Spanish")
def test_every_public_page_renders_in_spanish_with_machine_numbers_unlocalised(client):
    from tests.results.test_public_pages import _urls

    run = published_run()
    urls = {**_urls(run), "methodology": reverse("results:methodology"), "home": "/"}
    for name, url in urls.items():
        response = client.get(url, HTTP_ACCEPT_LANGUAGE="es")
        assert response.status_code == 200, name
        if response["Content-Type"].startswith("text/html"):
            assert '<html lang="es"' in response.content.decode(), name
    # Spanish writes 0,5; an SVG coordinate or a data value must stay 0.5.
    explore = client.get(reverse("results:explore"), HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert 'data-testid="sunburst"' in explore
    assert not re.search(r' (?:x|y|font-size|data-estimate-value)="-?\d+,\d', explore)
    assert re.search(r' x="-?\d+\.\d+"', explore)  # the wheel's coordinates, with their point


def _translated_templates() -> list[Path]:
    base = Path(settings.BASE_DIR)
    return [
        path
        for path in sorted((base / "templates").rglob("*.html"))
        if any(str(path.relative_to(base)).startswith(source) for source in TRANSLATED_SOURCES)
    ]


def test_the_translated_templates_hold_no_text_outside_a_translation_tag():
    """makemessages sees only what translation tags hold: a bare sentence in a translated page
    would be shown in English to a Spanish reader with every catalogue check green."""
    templates = _translated_templates()
    assert len(templates) > 40
    found = templates_bare_text(templates)
    assert found == {}, "Put this text inside {% translate %} / {% blocktranslate %}:\n" + (
        "\n".join(f"{path}: {piece}" for path, pieces in found.items() for piece in pieces)
    )
