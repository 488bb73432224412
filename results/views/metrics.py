from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.generic import ListView, TemplateView

from metrics_registry.forms import MetricFilterForm
from metrics_registry.selectors import metric_list, metric_status_history, metric_versions
from metrics_registry.text_selectors import metric_version_text, metric_version_texts

from ..charts import ForestRow, forest_svg, interval_methods
from ..language_pages import language_choice, language_gap_panels
from ..plain import metric_lead, metric_list_lead
from ..public import metric_results, metric_scenarios, public_metric, run_version_of
from ..selectors import run_targets
from ..services.judge_trust import metric_trust_rows
from .common import PublicRunMixin


class MetricListView(PublicRunMixin, ListView):
    """Every metric of the public run's release, searchable and filtered like the registry."""

    # ?run=, the filter form's fields and the page of the list.
    page_cache_params = (
        "run",
        "q",
        "area",
        "subarea",
        "polarity",
        "label_category",
        "status",
        "benchmark",
        "page",
    )

    template_name = "results/metric_list.html"
    context_object_name = "metrics"
    paginate_by = 50

    def get_queryset(self):
        self.run = self.get_run()
        self.filter_form = MetricFilterForm(self.request.GET or None)
        metrics = metric_list(user=None, **self.filter_form.filters())
        if self.run is not None:
            metrics = metrics.filter(release_items__release_id=self.run.release_id)
        return metrics

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(self.run_context(self.run))
        query = self.request.GET.copy()
        query.pop("page", None)
        context.update(filter_form=self.filter_form, query=query.urlencode())
        release = self.run.release.version if self.run is not None else None
        context["lead"] = metric_list_lead(release, context["paginator"].count)
        context["shown_texts"] = metric_version_texts(
            m.current_version for m in context["metrics"] if m.current_version is not None
        )
        return context


class MetricResultsView(PublicRunMixin, TemplateView):
    """A metric's definition, history, per-model pass rates, scenarios and conversations."""

    template_name = "results/metric_detail.html"
    page_cache_params = ("run", "lang")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.get_run()
        metric = public_metric(kwargs["key"])
        if metric is None:
            raise Http404("No published metric with this key.")
        context.update(self.run_context(run), metric=metric)
        versions = list(metric_versions(metric))
        context.update(
            versions=versions,
            version_texts=metric_version_texts(versions),
            history=metric_status_history(metric),
        )
        version = run_version_of(run, metric) if run is not None else None
        shown_version = version or metric.current_version
        if shown_version is not None:
            context["shown"] = metric_version_text(shown_version)
        if run is None:
            return context
        if version is None:
            context["not_in_run"] = True
            return context
        subareas = list(version.subareas.select_related("area").order_by("position"))
        targets = list(run_targets(run))
        lang = language_choice(run, self.request.GET.get("lang"))
        results = metric_results(
            run=run, version=version, targets=targets, language=lang.summary_language
        )
        rows = []
        for r in results:
            for age, e in (
                (pgettext("persona age", "teen"), r.teen),
                (pgettext("persona age", "adult"), r.adult),
            ):
                if e is not None:
                    rows.append(ForestRow(f"{r.target.name} · {age}", e))
        context.update(
            version=version,
            subareas=subareas,
            subarea=subareas[0] if subareas else None,
            results=results,
            lead=metric_lead(version.polarity, results),
            forest=forest_svg(
                rows,
                title=_("Pass rate of %(key)s per model, teen and adult apart")
                % {"key": metric.key},
            ),
            forest_method=interval_methods(rows),
            scenarios=metric_scenarios(run=run, version=version),
            judge_trust=metric_trust_rows(run, metric.key, targets),
            lang_choice=lang,
            lang_links=lang.links({"run": str(run.pk)}),
            reader_lang=lang.reader_lang,
            language_gaps=(
                language_gap_panels(run, metric_version=version.pk) if lang.switchable else []
            ),
        )
        return context
