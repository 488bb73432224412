"""The Nutrition Label's SVG drawn as PNG and PDF by headless Chromium, with no network.

The SVG is the one the label page offers for download; Chromium (Debian's package, the same
browser the browser tests drive through Playwright) lays it out in a blank page whose every
request is refused, then screenshots it (PNG, at twice the pixel density) or prints it to a
one-page PDF of the label's size. Callers render the SVG first: Playwright's sync API runs an
event loop in this thread, so no ORM call may happen while it is open.

Files are drawn ahead of any request, when the label's figures change, and stored
(`results.label_files`); a reader's request never starts Chromium.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from html import escape
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as _

PNG_SCALE = 2
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class ExportUnavailable(RuntimeError):
    """Chromium is not installed here: the label exists only as SVG."""


def chromium_path() -> str:
    path = (
        getattr(settings, "CHROMIUM_PATH", "")
        or os.environ.get("CHROMIUM_PATH", "")
        or shutil.which("chromium")
        or "/usr/bin/chromium"
    )
    if not os.path.exists(path):
        raise ExportUnavailable(_("Chromium is not installed at %(path)s.") % {"path": path})
    return path


def _page_html(svg: str, title: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title>"
        "<style>@page{margin:0}html,body{margin:0;padding:0;background:#fff}"
        "svg{display:block}</style></head>"
        f"<body>{svg}</body></html>"
    )


def _draw(browser, svg: str, *, width: int, height: int, title: str, fmt: str) -> bytes:
    context = browser.new_context(
        viewport={"width": width, "height": height},
        device_scale_factor=PNG_SCALE if fmt == "png" else 1,
        java_script_enabled=False,
        offline=True,
    )
    try:
        page = context.new_page()
        page.route("**/*", lambda route: route.abort())  # nothing leaves the machine
        page.set_content(_page_html(svg, title), wait_until="load")
        if fmt == "png":
            return page.screenshot(
                clip={"x": 0, "y": 0, "width": width, "height": height}, type="png"
            )
        return page.pdf(
            width=f"{width}px",
            height=f"{height}px",
            print_background=True,
            page_ranges="1",
        )
    finally:
        context.close()


def label_pages(jobs: list[dict]) -> list[bytes]:
    """Each job (svg, width, height, title, description, fmt "png" or "pdf") drawn by one
    Chromium started once for all of them: a PNG titled and described, a one-page PDF."""
    if not jobs:
        return []
    # The browser driver is heavy and optional: only a PNG or PDF drawing loads it.
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    drawn = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for job in jobs:
                data = _draw(
                    browser,
                    job["svg"],
                    width=job["width"],
                    height=job["height"],
                    title=job["title"],
                    fmt=job["fmt"],
                )
                if job["fmt"] == "png":
                    data = with_text(
                        data, Title=job["title"], Description=job.get("description", "")
                    )
                drawn.append(data)
        finally:
            browser.close()
    return drawn


def _itxt(keyword: str, text: str) -> bytes:
    """A PNG iTXt chunk (UTF-8 text, uncompressed)."""
    data = keyword.encode("latin-1") + b"\0\0\0\0\0" + text.encode("utf-8")
    return (
        struct.pack(">I", len(data))
        + b"iTXt"
        + data
        + struct.pack(">I", zlib.crc32(b"iTXt" + data) & 0xFFFFFFFF)
    )


def with_text(png: bytes, **chunks: str) -> bytes:
    """`png` with iTXt chunks (Title, Description) after its header chunk, so the image says
    in words what it shows (for search, screen readers of image viewers, and checks)."""
    header_end = 8 + 4 + 4 + 13 + 4  # signature, IHDR length, type, data, CRC
    extra = b"".join(_itxt(keyword, text) for keyword, text in chunks.items())
    return png[:header_end] + extra + png[header_end:]


def label_files_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "labels"
