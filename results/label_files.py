"""The Nutrition Label's image files (SVG, PNG, PDF), drawn when its figures change and served
as stored files.

Drawing a PNG or PDF starts headless Chromium (1–3 s), far too slow for a reader's request, so
the files are drawn ahead: a finished run's refresh and an official or headline designation
queue `results.tasks.label_files_render`, which draws every model's label for every population
of the run (one browser for all of them) and stores each file under MEDIA_ROOT/labels as
``run<run>-target<target>-<population>.<format>``, with a ``.digest`` beside it naming what it
shows: a file whose picture did not change is not drawn again. A run whose conversations span
several languages has each language's figures drawn too, beside the pooled ones
(``run<run>-target<target>-<population>-<language>.<format>``).

The PNG and PDF are drawn once per reader language of the site (`settings.LANGUAGES`): words
and numbers as that reader reads them, the default language's under the names above, another's
with ``@<reader>`` before the extension (``run1-target2-all-es@es.png``: figures of the Spanish
conversations, worded for a Spanish reader). The stored SVG is the default language's only: a
reader of another gets it drawn from its template, a cheap drawing.

The image views only read these files. A file not drawn yet (a run designated a moment ago, a
wiped media folder) is answered "being prepared" (503 with Retry-After; the SVG is drawn in
place, being only a template) and one drawing is queued: a marker file stops later requests
from queuing again until the drawing ends or the marker is older than REQUEUE_AFTER_SECONDS
(a lost task).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.text import Truncator
from django.utils.translation import gettext, ngettext, pgettext

from core.languages import language_display_name
from core.queueing import task_send
from evaluations.events import RunDesignated
from evaluations.models import EvaluationRun
from llm.models import ModelConfiguration

from .grades import grade_table
from .label import LABEL_AGES, LabelProfile, label_profile
from .label_export import label_files_dir, label_pages
from .selectors import run_is_synthetic, run_uses_offline_model, summary_languages

logger = logging.getLogger(__name__)

LABEL_WIDTH = 640
FORMATS = ("svg", "png", "pdf")
DRAWN_FORMATS = ("png", "pdf")  # by Chromium; the SVG is the template's text
REQUEUE_AFTER_SECONDS = 600


# The badge's right half fits its words (Helvetica at 11 px averages about 5.2 px a character),
# and is never narrower than the English badge's 146 px.
BADGE_LEFT = 104
BADGE_CHAR_WIDTH = 5.2
BADGE_PADDING = 10
BADGE_MIN_RIGHT = 146


def badge_words(profile: LabelProfile) -> dict[str, object]:
    """The badge's words in the active language, with the widths its text needs (Spanish
    words are longer than English ones)."""
    name, version = profile.target.name, profile.run.release.version
    grades = len(profile.lines)
    text = ngettext("Nutrition Label · %(n)s grade", "Nutrition Label · %(n)s grades", grades) % {
        "n": grades
    }
    right = max(BADGE_MIN_RIGHT, round(BADGE_PADDING + BADGE_CHAR_WIDTH * len(text)))
    return {
        "aria": gettext("ImpactBench Nutrition Label of %(name)s") % {"name": name},
        "title": gettext("ImpactBench %(version)s Nutrition Label: %(name)s")
        % {"version": version, "name": name},
        "offline": gettext("(offline demo model)"),
        "synthetic": gettext("(synthetic data)"),
        "text": text,
        "right": right,
        "width": BADGE_LEFT + right,
    }


@dataclass(frozen=True)
class LabelImage:
    """The label's SVG text with what the PNG and PDF carry besides (title, description)."""

    profile: LabelProfile
    body: str
    height: int
    title: str
    description: str

    def content(self, fmt: str) -> str:
        """Everything the file in `fmt` shows: its digest decides whether to draw it again."""
        parts = {"svg": (self.body,), "pdf": (self.body, self.title)}
        return "\n".join(parts.get(fmt, (self.body, self.title, self.description)))


def label_words(profile: LabelProfile, language: str) -> dict[str, str]:
    """The label image's words in the active language (kept here, not in the SVG template,
    so that the message catalogue's extraction, which reads HTML and Python, finds them)."""
    name, version = profile.target.name, profile.run.release.version
    counts = {
        "metrics": profile.n_metrics,
        "conversations": profile.n_conversations,
        "teen": profile.teen,
        "adult": profile.adult,
        "population": {
            "all": gettext("teen and adult personas"),
            "teen": gettext("teen personas (13–17) only"),
            "adult": gettext("adult personas (18+) only"),
        }.get(profile.age, profile.population),
    }
    return {
        "aria": gettext("AI Nutrition Label of %(name)s") % {"name": name},
        "title": gettext("AI Nutrition Label · %(name)s · ImpactBench release %(version)s")
        % {"name": name, "version": version},
        "heading": gettext("AI Nutrition Label · %(name)s") % {"name": Truncator(name).chars(40)},
        "release": gettext("ImpactBench release %(version)s · run “%(name)s”")
        % {"version": version, "name": Truncator(profile.run.name).chars(60)},
        "offline": gettext("offline demo model"),
        "synthetic": pgettext("label image", "SYNTHETIC DATA"),
        "counts": gettext(
            "%(metrics)s metrics · %(conversations)s conversations · %(teen)s teen, %(adult)s "
            "adult personas · shown for %(population)s"
        )
        % counts,
        "language": (
            gettext("conversations in %(language)s only")
            % {"language": language_display_name(language)}
            if language
            else ""
        ),
        "thin": gettext("thin evidence"),
        "no_interval": gettext("no interval"),
        "not_enough": gettext("not enough data"),
        "grades": gettext("Grades:"),
        "footer": gettext(
            "Behaviour under controlled stress tests, not everyday use. No overall grade, no "
            "“best model”. %(level)s cluster-bootstrap intervals."
        )
        % {"level": "95 %"},
    }


def label_image(
    *,
    run: EvaluationRun,
    target: ModelConfiguration,
    age: str = "all",
    template: str = "results/label.svg",
    language: str = "",
) -> LabelImage:
    """The label image of one model in one run for one population (`LABEL_AGES`); `template`
    draws another picture of the same figures (the badge)."""
    profile = label_profile(run=run, target=target, age=age, language=language)
    # Row positions for the image: headings and lines stacked 22 px apart.
    rows, y = [], 96
    for heading, lines in (
        (gettext("Beneficial behaviour promoted"), profile.promoted),
        (gettext("Harmful behaviour avoided"), profile.avoided),
    ):
        rows.append({"y": y, "heading": heading})
        y += 24
        for line in lines:
            rows.append({"y": y, "line": line})
            y += 22
        y += 8
    height = y + 52
    bands = [f"{g} {r}" for g, r in grade_table()]
    half = (len(bands) + 1) // 2
    body = render_to_string(
        template,
        {
            "offline": run_uses_offline_model(run),
            "synthetic": run_is_synthetic(run),
            "profile": profile,
            "age": profile.age,
            "language_name": language_display_name(language) if language else "",
            "words": label_words(profile, language),
            "badge": badge_words(profile),
            "rows": rows,
            "height": height,
            "grades": (" · ".join(bands[:half]), " · ".join(bands[half:])),
        },
    )
    title = gettext("AI Nutrition Label · %(name)s · release %(version)s · %(population)s") % {
        "name": profile.target.name,
        "version": run.release.version,
        "population": profile.population,
    }
    if language:
        title += " · " + gettext("conversations in %(language)s only") % {
            "language": language_display_name(language)
        }
    description = (
        gettext("Shown for %(population)s.") % {"population": profile.population}
        + " "
        + "; ".join(f"{line.category.name}: {line.grade_text}" for line in profile.lines)
    )
    return LabelImage(profile, body, height, title, description)


def reader_languages() -> list[str]:
    """The languages the PNG and PDF are worded in, the default first: the site's own (a
    bounded list, so the files of a run stay bounded too)."""
    others = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
    return [settings.LANGUAGE_CODE, *others]


def stored_path(
    *, run_id: int, target_id: int, age: str, fmt: str, language: str = "", reader: str = ""
) -> Path:
    """The file of one label: over every language, or with ``language`` that language's;
    worded for `reader` (blank: the site's default language)."""
    scope = f"-{language}" if language else ""
    if reader and reader != settings.LANGUAGE_CODE:
        scope += f"@{reader}"
    return label_files_dir() / f"run{run_id}-target{target_id}-{age}{scope}.{fmt}"


def stored_label(
    *, run_id: int, target_id: int, age: str, fmt: str, language: str = "", reader: str = ""
) -> bytes | None:
    """The stored file of this label, or None when it has not been drawn yet."""
    path = stored_path(
        run_id=run_id, target_id=target_id, age=age, fmt=fmt, language=language, reader=reader
    )
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _store(path: Path, data: bytes, digest: str) -> None:
    # Written beside and renamed into place: a reader sees the old file or the new, whole.
    for target, payload in ((path, data), (Path(f"{path}.digest"), digest.encode())):
        partial = Path(f"{target}.partial")
        partial.write_bytes(payload)
        os.replace(partial, target)


def _stored_digest(path: Path) -> str:
    try:
        return Path(f"{path}.digest").read_text() if path.exists() else ""
    except FileNotFoundError:
        return ""


def _changed(
    run: EvaluationRun,
    target: ModelConfiguration,
    age: str,
    language: str,
    reader: str,
    formats: tuple[str, ...],
) -> list[tuple[Path, str, str, LabelImage]]:
    """The files of one label, worded for `reader` (the active language), whose picture
    differs from the stored one's."""
    image = label_image(run=run, target=target, age=age, language=language)
    changed = []
    for fmt in formats:
        if fmt not in DRAWN_FORMATS and reader != settings.LANGUAGE_CODE:
            continue  # only the default language's SVG is stored
        path = stored_path(
            run_id=run.pk, target_id=target.pk, age=age, fmt=fmt, language=language, reader=reader
        )
        digest = _digest(image.content(fmt))
        if _stored_digest(path) != digest:
            changed.append((path, fmt, digest, image))
    return changed


def label_files_render(*, run: EvaluationRun, formats: tuple[str, ...] = FORMATS) -> int:
    """Draw and store every label file of the run whose picture changed; returns how many
    files were written. Chromium opens once, after every label is read from the database
    (its driver runs an event loop in this thread, where no ORM call may happen)."""
    folder = label_files_dir()
    folder.mkdir(parents=True, exist_ok=True)
    pending: list[tuple[Path, str, str, LabelImage]] = []
    # Every language pooled (blank), then each language's own figures when there are several.
    languages = ["", *summary_languages(run=run)]
    for reader in reader_languages():
        # The worker's own language is none of the readers': each is set here.
        with translation.override(reader):
            for target in run.targets.order_by("pk"):
                for age in LABEL_AGES:
                    for language in languages:
                        pending += _changed(run, target, age, language, reader, formats)
    for path, _, digest, image in (p for p in pending if p[1] == "svg"):
        _store(path, image.body.encode(), digest)
    drawn = [p for p in pending if p[1] != "svg"]
    pages = label_pages(
        [
            {
                "svg": image.body,
                "width": LABEL_WIDTH,
                "height": image.height,
                "title": image.title,
                "description": image.description,
                "fmt": fmt,
            }
            for _, fmt, _, image in drawn
        ]
    )
    for (path, _, digest, _), data in zip(drawn, pages, strict=True):
        _store(path, data, digest)
    return len(pending)


def _marker(run_id: int) -> Path:
    return label_files_dir() / f"run{run_id}.queued"


def label_files_soon(run_id: int) -> bool:
    """Queue one drawing of the run's label files; False when one is already queued (its
    marker younger than REQUEUE_AFTER_SECONDS). Called on every request that finds a file
    missing, so at most one task per run is waiting at a time."""
    marker = _marker(run_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        try:
            if time.time() - marker.stat().st_mtime < REQUEUE_AFTER_SECONDS:
                return False
        except FileNotFoundError:
            pass  # the drawing just ended; its files are there or the next request asks again
        marker.touch()
    _send(run_id)
    return True


def label_files_done(run_id: int) -> None:
    _marker(run_id).unlink(missing_ok=True)


def _send(run_id: int) -> None:
    try:
        task_send("results.tasks.label_files_render", run_id)
    except Exception:  # the broker is down: the next request after the marker expires retries
        logger.exception("Could not queue the label files of run %s", run_id)


def on_run_designated(event: RunDesignated) -> None:
    label_files_queue(run_id=event.run_id)


def label_files_queue(*, run_id: int) -> None:
    """Queue the drawing of a public run's label files (a refresh, a designation)."""
    if EvaluationRun.objects.filter(pk=run_id, is_official=True).exists():
        marker = _marker(run_id)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        _send(run_id)
