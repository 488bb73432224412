"""The Nutrition Label's SVG drawn as PNG and PDF by headless Chromium, with no network.

The SVG is the one the label page offers for download; Chromium (Debian's package, the same
browser the browser tests drive through Playwright) lays it out in a blank page whose every
request is refused, then screenshots it (PNG, at twice the pixel density) or prints it to a
one-page PDF of the label's size. Callers render the SVG first: Playwright's sync API runs an
event loop in this thread, so no ORM call may happen while it is open. The page cache keeps
the files, so Chromium starts once per label and data version.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from html import escape

from django.conf import settings

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
        raise ExportUnavailable(f"Chromium is not installed at {path}.")
    return path


def _page_html(svg: str, title: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title>"
        "<style>@page{margin:0}html,body{margin:0;padding:0;background:#fff}"
        "svg{display:block}</style></head>"
        f"<body>{svg}</body></html>"
    )


def _render(svg: str, *, width: int, height: int, title: str, fmt: str) -> bytes:
    # The browser driver is heavy and optional: only a PNG or PDF export loads it.
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=PNG_SCALE if fmt == "png" else 1,
                java_script_enabled=False,
                offline=True,
            )
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
            browser.close()


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


def label_png(svg: str, *, width: int, height: int, title: str, description: str = "") -> bytes:
    """The label as a PNG of (width × height) × PNG_SCALE pixels, titled and described."""
    png = _render(svg, width=width, height=height, title=title, fmt="png")
    return with_text(png, Title=title, Description=description)


def label_pdf(svg: str, *, width: int, height: int, title: str) -> bytes:
    """The label as a one-page PDF of its own size, text kept as text."""
    return _render(svg, width=width, height=height, title=title, fmt="pdf")
