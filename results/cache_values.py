"""The values of public pages' query parameters that the page cache may key on
(`core.pagecache.page_cache_values_register`): ids and keys that exist, the choices the filters
offer. Read once per data stamp; a value outside these is answered but never stored. Free text
(the metric list's `q`) is not registered, so a search is never cached."""

from collections.abc import Iterable

from core.pagecache import page_cache_values_register
from evaluations.models import ConversationStatus
from metrics_registry.models import (
    Area,
    LabelCategory,
    Metric,
    Polarity,
    Subarea,
    ValidationStatus,
)
from metrics_registry.selectors import benchmark_list
from rubrics.dimensions import dimension_labels
from rubrics.models import Acuity, Population

from .label import LABEL_AGES
from .models import SummaryLevel
from .public import AGES
from .selectors import public_runs


def _texts(values: Iterable[object]) -> frozenset[str]:
    return frozenset(str(value) for value in values)


def _public_run_ids() -> frozenset[str]:
    return _texts(public_runs().values_list("pk", flat=True))


def _public_model_ids() -> frozenset[str]:
    """Every target of a public run (the models its conversations and rubric replies are of)."""
    return _texts(public_runs().values_list("targets", flat=True).distinct())


def _metric_keys() -> frozenset[str]:
    return _texts(Metric.objects.values_list("key", flat=True))


def page_cache_values_register_all() -> None:
    choices = {
        "polarity": (*Polarity.values, "all"),
        "age": LABEL_AGES,
        "age_context": AGES,
        "level": SummaryLevel.values,
        "status": (*ValidationStatus.values, *ConversationStatus.values),
        "acuity": Acuity.values,
        "population": Population.values,
        "download": ("1",),
    }
    for name, values in choices.items():
        page_cache_values_register(name, lambda values=values: _texts(values))
    page_cache_values_register("run", _public_run_ids)
    for name in ("model", "target", "compare", "a", "b"):
        page_cache_values_register(name, _public_model_ids)
    page_cache_values_register("metric", _metric_keys)
    page_cache_values_register("area", lambda: _texts(Area.objects.values_list("slug", flat=True)))
    page_cache_values_register(
        "subarea", lambda: _texts(Subarea.objects.values_list("slug", flat=True))
    )
    page_cache_values_register(
        "label_category", lambda: _texts(LabelCategory.objects.values_list("slug", flat=True))
    )
    page_cache_values_register("benchmark", lambda: _texts(b.slug for b in benchmark_list()))
    page_cache_values_register("dimension", lambda: _texts(dimension_labels()))
