"""The Nutrition Label's SVG drawn as PNG and PDF by headless Chromium, with no network.

The SVG is the one the label page offers for download; Chromium (Debian's package, the same
browser the browser tests drive through Playwright) lays it out in a blank page whose every
request is refused, then screenshots it (PNG, at twice the pixel density) or prints it to a
one-page PDF of the label's size. Callers render the SVG first: Playwright's sync API runs an
event loop in this thread, so no ORM call may happen while it is open.

Each file is drawn once and stored (``label_file``), keyed by run, target, population and
format plus a digest of what it shows, so a new figure, name or release draws a new file and
nothing a reader sends (query strings, cookies, a cold or unreachable page cache) makes
Chromium start again. A lock file makes concurrent first requests wait for one drawing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import struct
import zlib
from collections.abc import Callable
from html import escape
from pathlib import Path

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


def label_files_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "labels"


def label_file(
    *,
    run_id: int,
    target_id: int,
    fmt: str,
    content: str,
    render: Callable[[], bytes],
    population: str = "all",
) -> bytes:
    """The stored file of this label, drawn by ``render`` only when no file shows ``content``
    (the SVG with its title and description) yet; older files of the same label are removed."""
    digest = hashlib.blake2b(content.encode(), digest_size=12).hexdigest()
    stem = f"run{run_id}-target{target_id}-{population}"
    folder = label_files_dir()
    path = folder / f"{stem}-{digest}.{fmt}"
    if path.exists():
        return path.read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{stem}.{fmt}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one drawing; the others wait and read its file
        if path.exists():
            return path.read_bytes()
        data = render()
        partial = path.with_suffix(f".{fmt}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)
        for old in folder.glob(f"{stem}-*.{fmt}"):
            if old != path:
                old.unlink(missing_ok=True)
    return data
