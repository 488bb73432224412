"""The Nutrition Label as PNG and PDF, drawn by headless Chromium from the label's SVG."""

import os
import re
import struct
import zlib

import pytest
from django.urls import reverse

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


def test_label_png_is_a_valid_image_of_the_label(client, chromium):
    run = published_run()
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


def test_label_pdf_is_one_page_of_the_labels_size_with_its_text(client, chromium):
    run = published_run()
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


def test_without_chromium_the_png_says_so_and_the_svg_still_works(client, settings):
    settings.CHROMIUM_PATH = "/nonexistent/chromium"
    run = published_run()
    target = run.targets.order_by("name").first()
    response = client.get(reverse("results:label-pdf", args=[target.pk]))
    assert response.status_code == 503
    assert "Chromium is not installed" in response.content.decode()
    assert client.get(reverse("results:label-svg", args=[target.pk])).status_code == 200


@pytest.mark.parametrize(
    ("name", "fmt"), [("results:label-png", "png"), ("results:label-pdf", "pdf")]
)
def test_a_label_file_is_drawn_once_and_served_from_its_stored_file(
    client, chromium, settings, tmp_path, name, fmt
):
    from django.core.cache import caches

    settings.MEDIA_ROOT = tmp_path
    run = published_run()
    target = run.targets.order_by("name").first()
    url = reverse(name, args=[target.pk])
    first = client.get(url, {"run": run.pk})
    assert first.status_code == 200
    (stored,) = (tmp_path / "labels").glob(f"run{run.pk}-target{target.pk}-all-*.{fmt}")
    assert stored.read_bytes() == first.content
    # Mark the stored file: a second drawing would replace the mark with an image.
    stored.write_bytes(b"stored " + fmt.encode())
    for extra in ({}, {"download": "1"}, {"utm": "x"}):
        caches["pages"].clear()  # a cold (or unreachable) page cache
        again = client.get(url, {"run": run.pk, **extra})
        assert again.content == b"stored " + fmt.encode()


def test_new_figures_draw_a_new_label_file_and_drop_the_old(settings, tmp_path):
    from results.label_export import label_file

    settings.MEDIA_ROOT = tmp_path
    drawn = []

    def draw(text):
        drawn.append(text)
        return text.encode()

    for content in ("A+ 96 %", "A+ 96 %", "B 76 %"):
        data = label_file(
            run_id=1, target_id=2, fmt="png", content=content, render=lambda c=content: draw(c)
        )
        assert data == content.encode()
    assert drawn == ["A+ 96 %", "B 76 %"]
    assert len(list((tmp_path / "labels").glob("run1-target2-all-*.png"))) == 1
