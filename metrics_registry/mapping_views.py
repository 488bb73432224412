"""Imported metrics that still need mapping onto the taxonomy, and the form that maps one."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.generic import TemplateView

from core.exceptions import ApplicationError
from core.ids import identifier_parse
from core.roles import Role, RoleRequiredMixin

from .forms import MetricMappingForm
from .models import Metric
from .selectors import metrics_needing_mapping
from .services import metric_version_create


class MetricsNeedingMappingView(RoleRequiredMixin, TemplateView):
    required_roles = (Role.RESEARCHER, Role.MAINTAINER)
    template_name = "metrics_registry/metrics_needing_mapping.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        versions = list(metrics_needing_mapping().prefetch_related("subareas"))
        forms = kwargs.get("forms") or {}
        context["rows"] = [
            (
                version,
                forms.get(version.metric_id)
                or MetricMappingForm(
                    prefix=f"m{version.metric_id}",
                    initial={
                        "subareas": [s.slug for s in version.subareas.all()],
                        "label_category": version.label_category.slug
                        if version.label_category
                        else "",
                    },
                ),
            )
            for version in versions
        ]
        return context

    def post(self, request):
        metric = get_object_or_404(
            Metric, pk=identifier_parse(request.POST.get("metric"), name="metric")
        )
        form = MetricMappingForm(request.POST, prefix=f"m{metric.pk}")
        if form.is_valid():
            try:
                metric_version_create(
                    metric=metric,
                    created_by=request.user,
                    change_note="Mapped onto the taxonomy after import.",
                    subarea_slugs=form.cleaned_data["subareas"],
                    label_category_slug=form.cleaned_data["label_category"],
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.success(
                    request,
                    _("Mapped %(metric_key)s; it can now enter a release.")
                    % {"metric_key": metric.key},
                )
                return redirect(reverse("metrics_registry:metrics_needing_mapping"))
        return self.render_to_response(self.get_context_data(forms={metric.pk: form}))
