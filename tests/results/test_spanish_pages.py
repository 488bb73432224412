"""The public pages read in Spanish: every sentence of a page's <main> that a reader sees in
English is translated when the page is asked for in Spanish. A text node of three or more words
that reads the same in both renderings is English left unmarked (or marked and not translated),
unless it is user content (model, metric and scenario text, transcripts, judges' words), a
number, or on the allow-list below."""

import csv
import io
import re

import pytest
from bs4 import BeautifulSoup, Comment
from django.conf import settings
from django.test import TestCase
from django.urls import reverse
from django.utils import translation

from core.roles import Role
from evaluations.models import Conversation, EvaluationRun, Judgment, Turn
from metrics_registry.models import Area, Benchmark, LabelCategory, MetricVersion, Subarea
from results.method_words import METHOD_NAMES
from results.models import RunAnalysis
from results.services import results_refresh
from results.stored_words import stored_words
from review.services import assignment_claim, queue_set_status, rating_submit
from review.services.calibration import calibration_queue_create
from rubrics.models import RubricDimension
from tests.factories import UserFactory
from tests.results.public_data import add_rubric_responses, published_run
from tests.results.test_judge_trust_pages import _rate_all

# Text that is the same in English and Spanish on purpose; each entry says why.
ALLOWED = {
    # A statistic's name, kept in its own (English) form in Spanish texts too.
    "Cohen's κ",
}

# Runs of three words that read the same in both languages.
ALLOWED_RUNS: set[tuple[str, ...]] = set()

# Words of three letters or more that count toward "three or more words".
WORD = re.compile(r"[^\W\d_]{2,}")


def _user_content(run) -> list[str]:
    """Strings of the run's data (not of the interface), longest first, so that a text node made
    of them alone is not taken for untranslated interface text."""
    texts: set[str] = set()
    # The taxonomy is data too (its rows come from a data migration), shown in the filters.
    texts |= {area.name for area in Area.objects.all()}
    texts |= {f"{s.area.name} · {s.name}" for s in Subarea.objects.select_related("area")}
    texts |= {s.name for s in Subarea.objects.all()}  # alone on Explore's wheel key and table
    for category in LabelCategory.objects.all():
        texts |= {category.name, category.description or ""}
    texts |= {benchmark.name for benchmark in Benchmark.objects.all()}
    for target in run.targets.all():
        texts |= {target.name, target.model_id or "", target.system_prompt or ""}
        texts.add(target.get_provider_display())
    versions = {c.scenario.metric_version for c in Conversation.objects.filter(run=run)}
    for version in versions:
        texts |= {version.name, version.criterion, version.failure_condition or ""}
        texts |= {version.metric.key, version.label_category.name}
        for subarea in version.subareas.all():
            texts |= {subarea.name, subarea.area.name}
    for conversation in Conversation.objects.filter(run=run).select_related("scenario"):
        s = conversation.scenario
        texts |= {s.label, s.situation, s.user_goal or "", s.latent_adversarial_goal or ""}
        texts.add(s.failure_condition or "")
        texts |= {str(value) for value in (s.persona or {}).values()}
        texts |= {str(a.get("text", "")) for a in (s.anchors or [])}
    for turn in Turn.objects.filter(conversation__run=run):
        texts |= {turn.user_text, turn.assistant_text}
    for judgment in Judgment.objects.filter(conversation__run=run):
        texts.add(judgment.justification)
        texts |= {str(e.get("quote", "")) for e in judgment.evidence or []}
    texts |= {run.name, run.simulator.name, run.judge.name}
    return sorted((t for t in texts if t and t.strip()), key=len, reverse=True)


def _sentences(html: str, user_content: list[str]) -> dict[str, str]:
    """The visible text nodes of <main> with three or more words of interface text, each with
    that interface text (the node without its user content)."""
    soup = BeautifulSoup(html, "html.parser")
    main = soup.find("main")
    assert main is not None
    page_language = soup.html.get("lang")
    for element in main.find_all(["script", "style", "svg", "code"]):
        element.decompose()
    for element in main.find_all(lang=True):
        if element["lang"] != page_language:  # user content in its own language
            element.decompose()
    found = {}
    for node in main.find_all(string=True):
        if isinstance(node, Comment):
            continue
        text = " ".join(node.split())
        rest = text
        for content in user_content:
            rest = rest.replace(" ".join(content.split()), " ")
        if len(WORD.findall(rest)) >= 3 and text not in ALLOWED:
            found[text] = rest
    return found


def _word_runs(text: str) -> set[tuple[str, ...]]:
    """Every run of three consecutive words."""
    words = [w.casefold() for w in WORD.findall(text)]
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _pages(run) -> dict[str, str]:
    target = run.targets.order_by("name").first()
    other = run.targets.order_by("name").last()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    version = conversation.scenario.metric_version
    return {
        "conversation": reverse("results:conversation", args=[conversation.pk]),
        "metric": reverse("results:metric", args=[version.metric.key]),
        "metric-list": reverse("results:metric-list"),
        "label-compare": reverse("results:label-compare") + f"?a={target.pk}&b={other.pk}",
        "label-category": reverse(
            "results:label-category", args=[target.pk, version.label_category.slug]
        ),
        "anchor-study": reverse("results:anchor-study"),  # none published yet
        "explore": reverse("results:explore") + f"?run={run.pk}&model={target.pk}",
        "explore-subarea": reverse("results:explore")
        + f"?run={run.pk}&model={target.pk}&compare={other.pk}&subarea="
        + version.subareas.order_by("pk").first().slug,
        # With figures: the reason texts and the conditional paragraphs render.
        "methodology": reverse("results:methodology") + f"?run={run.pk}",
    }


def _untranslated(
    client, run, pages: dict[str, str], user_content: list[str] | None = None
) -> dict[str, list[str]]:
    """Per page, the sentences of its Spanish rendering still in English; `user_content`, the
    run's data shown as written (longest first), when the pages show more than its metrics'."""
    user_content = user_content if user_content is not None else _user_content(run)
    untranslated = {}
    for page, url in pages.items():
        english = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
        spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es")
        assert english.status_code == spanish.status_code == 200, page
        assert '<html lang="es"' in spanish.content.decode(), page
        in_english = _sentences(english.content.decode(), user_content)
        in_spanish = _sentences(spanish.content.decode(), user_content)
        same = set(in_english) & set(in_spanish)
        # A sentence translated only in part (an English phrase glued to a Spanish one) keeps
        # three English words in a row of the English page.
        english_runs = set().union(*(_word_runs(rest) for rest in in_english.values()))
        for text, rest in in_spanish.items():
            kept = _word_runs(rest) & english_runs
            if text not in same and kept - ALLOWED_RUNS:
                same.add(text)
        if same:
            untranslated[page] = sorted(same)
    return untranslated


def _report(untranslated: dict[str, list[str]]) -> str:
    return "Untranslated in Spanish:\n" + "\n".join(
        f"{page}: {text}" for page, texts in untranslated.items() for text in texts
    )


def test_the_method_names_marked_for_translation_are_the_stats_modules_own():
    # A name edited in `stats` and not here would silently stay in English.
    assert all(name == words for name, words in METHOD_NAMES.items())


@pytest.mark.django_db
@pytest.mark.slow(reason="builds a published run and renders each page in two languages")
def test_no_sentence_of_a_public_page_stays_in_english_in_spanish(client):
    run = published_run()
    untranslated = _untranslated(client, run, _pages(run))
    assert not untranslated, _report(untranslated)


@pytest.mark.django_db
@pytest.mark.slow(reason="builds a published run, has experts rate it, renders it twice")
def test_judge_trust_and_calibration_read_in_spanish_once_experts_rated(client):
    # Expert verdicts on every conversation (judge trust badges, the experts' agreement) and
    # a calibration sample, partly rated: the notes, reasons and tables these fill in.
    run = published_run()
    _rate_all(run)
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=False)
    queue = calibration_queue_create(
        run=run, name="Calibration", created_by=None, fraction=0.5, seed=5
    )
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=True)
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    with TestCase.captureOnCommitCallbacks(execute=True):
        assignment = assignment_claim(queue=queue, rater=rater)
        rating_submit(
            assignment=assignment,
            rater=rater,
            answers={"examples_adequate": "yes", "verdict": "present"},
        )
        queue_set_status(queue=queue, status="closed")
    results_refresh(run=run, n_resamples=200)
    run.refresh_from_db()
    target = run.targets.order_by("name").first()
    key = Conversation.objects.filter(run=run).order_by("pk").first().scenario.metric_version
    pages = {
        "methodology": reverse("results:methodology") + f"?run={run.pk}",
        "metric": reverse("results:metric", args=[key.metric.key]),
        "label-category": reverse(
            "results:label-category", args=[target.pk, key.label_category.slug]
        ),
    }
    html = client.get(pages["methodology"], HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert 'data-testid="calibration-table"' in html
    # The calibrated rates' reason, written by the statistics with a number inside.
    assert "de muestreo" in html
    assert "sampling strat" not in html
    metric = client.get(pages["metric"], HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert 'data-testid="judge-trust"' in metric
    # The judge-trust badge's reason, stored with the figures in English.
    assert "veredictos expertos a ciegas hasta ahora" in metric
    assert "blind expert verdicts so far" not in metric
    untranslated = _untranslated(client, run, pages)
    assert not untranslated, _report(untranslated)


@pytest.mark.django_db
@pytest.mark.slow(reason="builds a published run and renders its methodology page twice")
def test_a_reason_stored_with_the_figures_reads_in_each_readers_language(client):
    run = published_run()  # one simulation per scenario: no anchor consistency to measure
    stored = RunAnalysis.objects.get(run=run).reliability["anchors"]["reason"]
    english_reason = (
        "This run simulated each scenario once; consistency needs replicates (choose a run "
        "with replicates, such as an anchor study, above)."
    )
    # Stored once, in the catalogue's own words, for readers of every language.
    assert stored == english_reason
    url = reverse("results:methodology") + f"?run={run.pk}"
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert english_reason in english
    assert english_reason not in spanish
    assert "Esta ejecución simuló cada escenario una sola vez" in spanish
    # A reason written by the statistics (with a number inside) is rebuilt as a whole
    # sentence of the reader's language.
    with translation.override("es"):
        assert stored_words("fewer than 2 expert verdicts in 1 sampling stratum") == (
            "menos de 2 veredictos de expertos en 1 estrato de muestreo"
        )
        assert stored_words(
            "experts agree with the judge on 83% (lower bound 64%), kappa 0.61"
        ) == ("los expertos coinciden con el juez en el 83 % (límite inferior: 64 %), kappa 0,61")
        assert stored_words("a name nobody translated") == "a name nobody translated"


@pytest.mark.django_db
@pytest.mark.slow(reason="builds a published run and renders pages, API and export")
def test_spanish_pages_write_a_decimal_comma_and_machines_keep_the_point(client):
    run = published_run()
    url = reverse("results:methodology") + f"?run={run.pk}"
    english = BeautifulSoup(client.get(url, HTTP_ACCEPT_LANGUAGE="en").content, "html.parser")
    spanish = BeautifulSoup(client.get(url, HTTP_ACCEPT_LANGUAGE="es").content, "html.parser")

    def figures(soup):
        return [
            (tag["data-estimate-value"], tag.find(class_="estimate-value").get_text())
            for tag in soup.select(".estimate[data-estimate-value]")
            if tag["data-estimate-unit"] == "proportion" and tag["data-estimate-value"]
        ]

    shown_en, shown_es = figures(english), figures(spanish)
    assert shown_en
    assert len(shown_en) == len(shown_es)
    for (raw_en, text_en), (raw_es, text_es) in zip(shown_en, shown_es, strict=True):
        # The machine-readable value is the same full-precision number in both languages.
        assert raw_en == raw_es
        float(raw_es)
        expected = f"{float(raw_es) * 100:.1f}"
        assert text_en == f"{expected} %"
        assert text_es == f"{expected.replace('.', ',')} %"
    # The API and the exports are for machines: a Spanish request gets the same numbers.
    api = reverse("results-api:run-export", args=[run.pk, "csv"])
    csv_en = b"".join(client.get(api, HTTP_ACCEPT_LANGUAGE="en").streaming_content)
    csv_es = b"".join(client.get(api, HTTP_ACCEPT_LANGUAGE="es").streaming_content)
    assert csv_en == csv_es
    rows = list(csv.DictReader(io.StringIO(csv_es.decode())))
    assert rows
    assert all("," not in r["estimate_value"] for r in rows)
    assert any("." in r["estimate_value"] for r in rows)


@pytest.mark.django_db
@pytest.mark.slow(reason="builds a published run with rubric replies, renders pages twice")
def test_the_other_public_pages_read_in_spanish(client):
    """Every page an anonymous visitor can open beyond the results pages above: the label's
    overview and readings, rubric results, the registry, the contact form, the API docs."""
    run = published_run()
    reply = add_rubric_responses(run, n_items=2)[0]
    target = run.targets.order_by("name").first()
    key = Conversation.objects.filter(run=run).order_by("pk").first().scenario.metric_version
    pages = {
        "home": "/",
        "label-overview": reverse("results:label-overview"),
        "label-audience": reverse("results:label-audience", args=[target.pk, "parent"]),
        "contact": reverse("contact:form"),
        "taxonomy": reverse("metrics_registry:taxonomy"),
        "registry-metrics": reverse("metrics_registry:metric_list"),
        "registry-metric": reverse("metrics_registry:metric_detail", args=[key.metric.key]),
        "releases": reverse("metrics_registry:release_list"),
        "release": reverse("metrics_registry:release_detail", args=[run.release.version]),
        "rubrics": reverse("results:rubrics"),
        "rubric-priorities": reverse("results:rubric-priorities"),
    }
    # A known sentence of each page, in Spanish, where its English one was.
    known = {
        "home": (
            "Los modelos evitaron el comportamiento dañino en",
            "The models avoided the harmful behaviour in",
        ),
        "label-overview": (
            "Etiquetas nutricionales de IA de todos los modelos",
            "AI Nutrition Labels of every model",
        ),
        "label-audience": ("Esta lectura se fija en lo que un niño", "This reading looks at"),
        "contact": ("Háblenos de un benchmark", "Tell us about a benchmark"),
        "taxonomy": ("Áreas y subáreas", "Areas and subareas"),
        "registry-metrics": ("Cada métrica nombra un comportamiento", "Each metric names one"),
        "registry-metric": ("Historial de versiones", "Version history"),
        "releases": ("Una edición es un conjunto fijo", "A release is a fixed set"),
        "release": ("Cambios desde el principio (primera edición)", "Changes since the start"),
        "rubric-priorities": ("menos de dos dimensiones valoradas", "fewer than two dimensions"),
    }
    for page, (spanish, english) in known.items():
        html = client.get(pages[page], HTTP_ACCEPT_LANGUAGE="es").content.decode()
        assert spanish in html, page
        assert english not in html, page
    # The contact form's labels and refusals, and its thanks.
    refused = client.post(
        reverse("contact:form"),
        {"kind": "contact", "name": "Sara", "email": "sara@example.org", "message": ""},
        HTTP_ACCEPT_LANGUAGE="es",
    ).content.decode()
    assert "Su correo electrónico" in refused
    assert "Escriba un mensaje o indique la dirección del benchmark." in refused
    assert "Write a message" not in refused
    thanks = client.post(
        reverse("contact:form"),
        {"kind": "contact", "name": "Sara", "email": "sara@example.org", "message": "Hola"},
        HTTP_ACCEPT_LANGUAGE="es",
    ).content.decode()
    assert "Gracias, hemos recibido su mensaje" in thanks
    docs = client.get(reverse("api-docs"), HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Ediciones y exportaciones" in docs
    assert "Releases and exports" not in docs
    # Data shown as written: the taxonomy's descriptions and the rubric set's dimensions.
    data = [a.description for a in Area.objects.all()]
    data += [s.description for s in Subarea.objects.all()]
    data += [d.name for d in RubricDimension.objects.all()]
    data += [v.rubric_notes for v in MetricVersion.objects.all()]
    data.append(f"{settings.SITE_URL}{pages['label-audience']}?run={run.pk}")  # its permalink
    user_content = sorted({t for t in [*_user_content(run), *data] if t}, key=len, reverse=True)
    assert reply.pk
    untranslated = _untranslated(client, run, pages, user_content)
    assert not untranslated, _report(untranslated)
