from django.views.generic import TemplateView

from .selectors import area_list_with_subareas


class TaxonomyView(TemplateView):
    template_name = "metrics_registry/taxonomy.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["areas"] = area_list_with_subareas()
        return context
