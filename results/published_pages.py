"""A release's public pages and API answers, rendered when its figures change and served as
stored answers (`core.page_store`).

The parameter space of a public run is finite: its models, the ages, polarities, subareas,
audiences and metrics. `published_page_addresses` lists the addresses readers and the site's
own links ask for over that space, each run's with ``?run=`` and, for the run shown by default,
without; `published_pages_render` renders those of every public run (the stamp every stored
page carries is the whole site's, so one change moves them all). A worker does it after a
run's refresh, a designation and a release's publication (`published_pages_soon`). Any other
address (a conversation, a filter combination not listed) is rendered on request, as before.
"""

from __future__ import annotations

import contextlib
import logging
from itertools import permutations, product
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.urls import reverse

from core.caches import page_cache
from core.page_store import pages_store
from core.progress import Progress, progress_ignore
from core.queueing import task_send
from evaluations.events import RunDesignated
from evaluations.models import EvaluationRun

from .audiences import AUDIENCES
from .label import LABEL_AGES
from .public import AGES, POLARITIES
from .selectors import (
    public_run_default,
    public_runs,
    run_metric_keys,
    run_subarea_slugs,
    run_targets,
    summary_languages,
)

logger = logging.getLogger(__name__)

# The page key holds the API's one representation (`core.pagecache.page_representation`): a
# client that sends no Accept, */* or application/json reads the same stored answer; one that
# asks for anything else (indented JSON, say) is rendered on request.
API_ACCEPTS = ("",)
# One render queued at a time: a marker in the page cache, removed when the render starts.
QUEUED_MARKER = "published_pages:queued"
QUEUED_SECONDS = 900


def _address(path: str, **query: object) -> str:
    params = urlencode([(k, v) for k, v in query.items() if v is not None])
    return f"{path}?{params}" if params else path


def published_page_addresses(run: EvaluationRun, *, default: bool) -> list[str]:
    """Every address of the run's parameter space, the most read first; with ``default``, also
    the addresses without ``?run=`` (the run shown when none is asked for)."""
    models = list(run_targets(run).order_by("pk").values_list("pk", flat=True))
    keys = run_metric_keys(run)
    subareas = run_subarea_slugs(run)
    languages = summary_languages(run=run)
    forms: list[dict[str, object]] = [{"run": run.pk}]
    if default:
        forms.insert(0, {})
    addresses: list[str] = []
    for form in forms:
        addresses += _pages(form, run, models, keys, subareas)
        addresses += _language_images(form, models, languages)
    for form in forms:
        addresses += _api(form, run, models, keys, subareas)
    return list(dict.fromkeys(addresses))


def _pages(form: dict, run: EvaluationRun, models: list, keys: list, subareas: list) -> list[str]:
    explore = reverse("results:explore")
    pages = [_address(explore, **form), _address(reverse("results:methodology"), **form)]
    pages += [_address(reverse("results:metric-list"), **form)]
    pages += [
        _address(reverse("results:metric-list"), **form, polarity=polarity)
        for polarity in POLARITIES
    ]
    pages += [_address(reverse("results:label-overview"), **form)]
    pages += [_address(reverse("metrics_registry:release_detail", args=[run.release.version]))]
    for model in models:
        pages.append(_address(explore, **form, model=model))
        label = reverse("results:label", args=[model])
        pages += [_address(label, **form), *(_address(label, **form, age=a) for a in LABEL_AGES)]
        pages += [
            _address(reverse("results:label-audience", args=[model, slug]), **form)
            for slug in AUDIENCES
        ]
        # The label's images: files drawn ahead (`label_files`), stored here as answers too.
        for name in ("results:label-svg", "results:label-png", "results:label-pdf"):
            image = reverse(name, args=[model])
            pages += [_address(image, **form)]
            pages += [_address(image, **form, age=age) for age in LABEL_AGES]
        pages += [_address(reverse("results:label-badge", args=[model]), **form)]
    # The site's own links and forms (the wheel's, the filters') name every parameter.
    for model, age, polarity in product(models, AGES, POLARITIES) if form else ():
        chosen = {**form, "model": model, "age": age, "polarity": polarity}
        pages.append(_address(explore, **chosen))
        pages += [_address(explore, **chosen, subarea=slug) for slug in subareas]
    pages += [
        _address(reverse("results:label-compare"), **form, a=a, b=b)
        for a, b in permutations(models, 2)
    ]
    # A release has hundreds of metrics: their pages are stored in one form, the one the
    # run's links use (without ?run= for the run shown by default).
    if _metric_form(run, form):
        pages += [_address(reverse("results:metric", args=[key]), **form) for key in keys]
    return pages


def _language_images(form: dict, models: list, languages: list[str]) -> list[str]:
    """The label's images of each language of a run whose conversations span several: the
    files drawn per language (`label_files`), as the label page with ``?lang=`` links them."""
    images = []
    for model, language in product(models, languages):
        for name in ("results:label-svg", "results:label-png", "results:label-pdf"):
            image = reverse(name, args=[model])
            images += [_address(image, **form, lang=language)]
            images += [_address(image, **form, age=age, lang=language) for age in LABEL_AGES]
    return images


def _metric_form(run: EvaluationRun, form: dict) -> bool:
    default = public_run_default()
    return (form == {}) == (default is not None and default.pk == run.pk)


def _api(form: dict, run: EvaluationRun, models: list, keys: list, subareas: list) -> list[str]:
    api = [
        _address(reverse("registry-api:release-detail", args=[run.release.version])),
        _address(reverse("results-api:run-detail", args=[run.pk])),
        _address(reverse("results-api:run-results", args=[run.pk])),
        _address(reverse("results-api:run-calibration", args=[run.pk])),
        _address(reverse("results-api:run-judges", args=[run.pk])),
        _address(reverse("results-api:explore"), **form),
    ]
    results = reverse("results-api:run-results", args=[run.pk])
    api += [_address(results, target=model) for model in models]
    api += [_address(results, subarea=slug) for slug in subareas]
    for model in models:
        api.append(_address(reverse("results-api:explore"), **form, model=model))
        api.append(_address(reverse("results-api:label", args=[model]), **form))
        for age, polarity in product(AGES, POLARITIES):
            api.append(
                _address(
                    reverse("results-api:explore"),
                    **form,
                    model=model,
                    age_context=age,
                    polarity=polarity,
                )
            )
    if _metric_form(run, form):
        metric_results = (reverse("results-api:metric-results", args=[k]) for k in keys)
        api += [_address(path, **form) for path in metric_results]
    return api


def published_pages_render(*, progress: Progress = progress_ignore) -> int:
    """Render and store the pages of every public run (the default run's first); returns the
    pages stored."""
    default = public_run_default()
    addresses: list[str] = []
    for run in public_runs():
        addresses += published_page_addresses(run, default=default is not None and run == default)
    return pages_store(addresses, origin=settings.SITE_URL, accepts=API_ACCEPTS, progress=progress)


def on_published_figures_changed(event: RunDesignated) -> None:
    """A run was designated or withdrawn: its pages, and the default ones, change."""
    published_pages_soon()


def on_release_publishing(*, release: object) -> list[str]:
    """A release is being published: its pages are rendered once the publication commits."""
    transaction.on_commit(published_pages_soon)
    return []


def published_pages_soon() -> bool:
    """Queue one render of the published pages; False when one is queued already (the render
    about to start sees the latest figures)."""
    try:
        if not page_cache().add(QUEUED_MARKER, 1, QUEUED_SECONDS):
            return False
    except Exception:  # noqa: BLE001 - no cache: queue anyway
        logger.warning("Page cache unavailable: the published pages render is queued anyway")
    try:
        task_send("results.tasks.published_pages_render")
    except Exception:  # the broker is down: the pages are rendered on request meanwhile
        logger.exception("Could not queue the published pages render")
        return False
    return True


PROGRESS_KEY = "published_pages:progress"


def published_pages_progress(done: int, total: int, stage: str = "") -> None:
    """The render's progress, logged every tenth and kept in the page cache for whoever
    follows it (`published_pages_status`)."""
    step = max(1, total // 10)
    if done % step and done != total:
        return
    logger.info("Published pages: %s of %s rendered", done, total)
    with contextlib.suppress(Exception):  # no cache: the log says it
        page_cache().set(PROGRESS_KEY, {"done": done, "total": total, "stage": stage}, 3600)


def published_pages_status() -> dict | None:
    """The latest render's progress (``done``, ``total``), or None when none is known."""
    with contextlib.suppress(Exception):
        return page_cache().get(PROGRESS_KEY)
    return None


def published_pages_started() -> None:
    """A render is starting: a change from here on queues the next one."""
    with contextlib.suppress(Exception):  # no cache: nothing was marked
        page_cache().delete(QUEUED_MARKER)
