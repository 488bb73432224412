"""The Nutrition Label as PNG and PDF, drawn by headless Chromium from the label's SVG."""

import os
import re
import struct
import zlib

import pytest
from django.urls import reverse
from django.utils import translation

from results.label import label_profile
from results.label_export import ExportUnavailable, chromium_path
from tests.results import pdftext
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def chromium():
    try:
        chromium_path()
    except ExportUnavailable:
        if os.environ.get("REQUIRE_BROWSER"):
            raise
        pytest.skip("Chromium is not installed (apt-get install chromium)")


def _svg_size(client, target, run) -> tuple[int, int]:
    svg = client.get(reverse("results:label-svg", args=[target.pk]), {"run": run.pk})
    match = re.search(r'width="(\d+)" height="(\d+)"', svg.content.decode())
    return int(match.group(1)), int(match.group(2))


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks.append((kind, body))
        at += 12 + length
    return chunks


@pytest.mark.slow(reason="renders the label in headless Chromium")
def test_label_png_is_a_valid_image_of_the_label(client, chromium, settings, tmp_path):
    from results.label_files import label_files_render

    settings.MEDIA_ROOT = tmp_path
    run = published_run()
    label_files_render(run=run)
    target = run.targets.order_by("name").first()
    profile = label_profile(run=run, target=target)
    width, height = _svg_size(client, target, run)
    response = client.get(
        reverse("results:label-png", args=[target.pk]), {"run": run.pk, "download": 1}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Disposition"].endswith(f'-{target.pk}.png"')
    chunks = _png_chunks(response.content)
    kind, header = chunks[0]
    assert kind == b"IHDR"
    assert struct.unpack(">II", header[:8]) == (width * 2, height * 2)  # twice the density
    assert chunks[-1][0] == b"IEND"
    assert sum(len(body) for kind, body in chunks if kind == b"IDAT") > 5_000  # not blank
    text = {
        body.split(b"\0", 1)[0].decode(): body.split(b"\0", 5)[-1].decode()
        for kind, body in chunks
        if kind == b"iTXt"
    }
    assert target.name in text["Title"]
    assert run.release.version in text["Title"]
    for line in profile.lines:
        assert f"{line.category.name}: {line.grade}" in text["Description"]
    # The other model's image is another picture.
    other = run.targets.order_by("name").last()
    assert client.get(reverse("results:label-png", args=[other.pk])).content != response.content


@pytest.mark.slow(reason="renders the label in headless Chromium")
def test_label_pdf_is_one_page_of_the_labels_size_with_its_text(
    client, chromium, settings, tmp_path
):
    from results.label_files import label_files_render

    settings.MEDIA_ROOT = tmp_path
    run = published_run()
    label_files_render(run=run, formats=("pdf",))
    target = run.targets.order_by("name").first()
    profile = label_profile(run=run, target=target)
    width, height = _svg_size(client, target, run)
    response = client.get(reverse("results:label-pdf", args=[target.pk]), {"run": run.pk})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    data = response.content
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")
    assert target.name in pdftext.title(data)
    pages = pdftext.pages(data)
    assert len(pages) == 1
    assert pages[0]["mediabox"] == [0, 0, width * 0.75, height * 0.75]  # CSS px → points
    text = pages[0]["text"]
    assert f"AI Nutrition Label · {target.name}" in text
    assert f"{profile.n_conversations} conversations" in text
    lines = text.splitlines()
    for line in profile.lines:
        name = line.category.name + (" (thin evidence)" if line.thin else "")
        at = lines.index(name)
        assert lines[at - 1] == line.grade  # the grade box precedes its category
        assert f"n = {line.estimate.n}" in lines[at + 1]


def test_the_label_page_links_its_downloads(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:label", args=[target.pk])).content.decode()
    for name in ("label-png", "label-pdf", "label-svg"):
        assert f"{reverse(f'results:{name}', args=[target.pk])}?run={run.pk}&amp;download=1" in html


def test_without_chromium_the_png_says_so_and_the_svg_still_works(client, settings, caplog):
    settings.CHROMIUM_PATH = "/nonexistent/chromium"
    run = published_run()
    target = run.targets.order_by("name").first()
    response = client.get(reverse("results:label-pdf", args=[target.pk]))
    assert response.status_code == 503
    body = response.content.decode()
    assert body == "This server cannot draw the label as PDF. The label is available as SVG."
    # The server's path is logged for its operator, never shown to a reader.
    assert "/nonexistent/chromium" not in body
    assert "Chromium is not installed at /nonexistent/chromium" in caplog.text
    assert client.get(reverse("results:label-svg", args=[target.pk])).status_code == 200

    with translation.override("es"):
        spanish = client.get(reverse("results:label-png", args=[target.pk]))
    assert spanish.status_code == 503
    assert spanish.content.decode() == (
        "Este servidor no puede dibujar la etiqueta en PNG. La etiqueta está disponible en SVG."
    )


@pytest.fixture
def drawn(settings, tmp_path, monkeypatch):
    """Label files stored under a scratch MEDIA_ROOT; the drawings counted and faked (each
    job's format and title), and queued tasks recorded instead of sent."""
    from results import label_files

    settings.MEDIA_ROOT = tmp_path
    calls = {"drawings": [], "queued": []}

    def fake_pages(jobs):
        calls["drawings"].extend(job["fmt"] for job in jobs)
        return [f"{job['fmt']}:{job['title']}".encode() for job in jobs]

    monkeypatch.setattr(label_files, "label_pages", fake_pages)
    monkeypatch.setattr(label_files, "_send", calls["queued"].append)
    return calls


def _render(run):
    from results.label_files import label_files_render

    return label_files_render(run=run)


@pytest.mark.parametrize(
    ("name", "fmt"), [("results:label-png", "png"), ("results:label-pdf", "pdf")]
)
def test_a_label_not_drawn_yet_is_being_prepared_and_queued_once(
    client, drawn, settings, name, fmt
):
    from django.core.cache import caches

    settings.CHROMIUM_PATH = "/bin/true"  # installed: a drawing will come
    run = published_run()
    target = run.targets.order_by("name").first()
    url = reverse(name, args=[target.pk])
    for _ in range(3):
        caches["pages"].clear()
        response = client.get(url, {"run": run.pk})
        assert response.status_code == 503
        assert response["Retry-After"] == "30"
        assert "being prepared" in response.content.decode()
        assert reverse("results:label-svg", args=[target.pk]) in response.content.decode()
    assert drawn["queued"] == [run.pk]  # one drawing queued, not one per request
    assert drawn["drawings"] == []  # never drawn on a request

    # A Spanish reader is told in Spanish, and sent to the Spanish SVG.
    with translation.override("es"):
        spanish_url = reverse(name, args=[target.pk])
    caches["pages"].clear()
    spanish = client.get(spanish_url, {"run": run.pk})
    assert spanish.status_code == 503
    text = spanish.content.decode()
    assert text.startswith(f"El {fmt.upper()} de esta etiqueta se está preparando")
    assert "/es/" in text


@pytest.mark.parametrize(
    ("name", "fmt"), [("results:label-png", "png"), ("results:label-pdf", "pdf")]
)
def test_a_drawn_label_is_served_from_its_stored_file(client, drawn, tmp_path, name, fmt):
    from django.core.cache import caches

    run = published_run()
    target = run.targets.order_by("name").first()
    _render(run)
    stored = tmp_path / "labels" / f"run{run.pk}-target{target.pk}-all.{fmt}"
    assert stored.read_bytes().startswith(f"{fmt}:AI Nutrition Label · {target.name}".encode())
    stored.write_bytes(b"stored " + fmt.encode())  # a drawing on request would replace it
    n = len(drawn["drawings"])
    for extra in ({}, {"download": "1"}, {"utm": "x"}):
        caches["pages"].clear()  # a cold (or unreachable) page cache
        again = client.get(reverse(name, args=[target.pk]), {"run": run.pk, **extra})
        assert again.status_code == 200
        assert again.content == b"stored " + fmt.encode()
    assert len(drawn["drawings"]) == n
    assert drawn["queued"] == []


def test_the_svg_is_stored_too_and_drawn_in_place_while_missing(client, drawn, tmp_path):
    from django.core.cache import caches

    run = published_run()
    target = run.targets.order_by("name").first()
    url = reverse("results:label-svg", args=[target.pk])
    missing = client.get(url, {"run": run.pk})
    assert missing.status_code == 200  # the template is cheap: the visitor gets the label
    assert drawn["queued"] == [run.pk]
    _render(run)
    stored = tmp_path / "labels" / f"run{run.pk}-target{target.pk}-all.svg"
    assert stored.read_bytes() == missing.content
    stored.write_bytes(b"<svg>stored</svg>")
    caches["pages"].clear()
    assert client.get(url, {"run": run.pk}).content == b"<svg>stored</svg>"


def test_every_model_population_and_format_is_drawn_and_only_changes_are_drawn_again(drawn):
    from django.conf import settings
    from django.core.cache import caches

    from evaluations.models import Conversation
    from results.label import LABEL_AGES

    run = published_run()
    targets = run.targets.count()
    # The SVG, PNG and PDF in the default language; a PNG and a PDF per other reader language.
    readers = len(settings.LANGUAGES)
    per_label = 3 + 2 * (readers - 1)
    assert _render(run) == targets * len(LABEL_AGES) * per_label
    assert sorted(set(drawn["drawings"])) == ["pdf", "png"]
    assert len(drawn["drawings"]) == targets * len(LABEL_AGES) * 2 * readers
    assert _render(run) == 0  # nothing changed: nothing drawn
    assert len(drawn["drawings"]) == targets * len(LABEL_AGES) * 2 * readers
    # One model's figures move: only its files are drawn again.
    target = run.targets.order_by("name").first()
    Conversation.objects.filter(run=run, target=target).update(verdict_passed=False)
    caches["pages"].clear()  # as a refresh does, by stamping the run's analysis anew
    assert _render(run) == len(LABEL_AGES) * per_label


def test_a_refresh_and_a_designation_queue_the_drawing(drawn, django_capture_on_commit_callbacks):
    from evaluations.services.official import run_set_headline
    from results.tasks import results_refresh

    run = published_run()
    results_refresh(run.pk)
    assert drawn["queued"] == [run.pk]
    with django_capture_on_commit_callbacks(execute=True):
        run_set_headline(run=run, headline=True, changed_by=None)
    assert drawn["queued"] == [run.pk, run.pk]


def test_the_drawing_task_draws_and_clears_its_marker(drawn, tmp_path):
    from results.label_files import label_files_soon
    from results.tasks import label_files_render

    run = published_run()
    assert label_files_soon(run.pk)
    assert not label_files_soon(run.pk)
    label_files_render(run.pk)
    assert (tmp_path / "labels" / f"run{run.pk}.queued").exists() is False
    assert drawn["drawings"]
    assert label_files_soon(run.pk)  # after the drawing, a missing file queues again


@pytest.mark.parametrize("name", ["results:label-svg", "results:label-png", "results:label-pdf"])
def test_a_model_outside_the_run_is_not_found_whatever_the_files(client, drawn, name):
    from llm.models import ModelConfiguration

    run = published_run()
    _render(run)
    outsider = ModelConfiguration.objects.exclude(pk__in=run.targets.all()).first()
    pk = outsider.pk if outsider else 987_654
    assert client.get(reverse(name, args=[pk]), {"run": run.pk}).status_code == 404
    assert drawn["queued"] == []
