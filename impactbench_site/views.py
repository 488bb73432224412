"""The site's own pages, which draw on several apps."""

from django.views.generic import TemplateView

from metrics_registry.selectors import area_list_with_subareas
from results.findings import headline_findings


class HomeView(TemplateView):
    template_name = "core/home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["areas"] = area_list_with_subareas()
        context["findings"] = headline_findings()
        return context
