"""Scenario pages for researchers: the index, a metric version's set, one scenario, and
generating, editing, retiring and regenerating them. Validate, call a service, render."""

import time

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import DetailView, ListView, TemplateView

from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin, user_has_role
from metrics_registry.selectors import metric_versions_with_metric

from .forms import ScenarioForm
from .selectors import (
    metric_versions_with_scenarios,
    scenario_list,
    scenario_set_complete,
    scenarios_with_people,
)
from .services import scenario_edits
from .services import scenarios as scenario_services

VIEW_ROLES = (Role.RESEARCHER, Role.MAINTAINER, Role.EXPERT_REVIEWER)
CURATE_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class ScenarioIndexView(RoleRequiredMixin, ListView):
    required_roles = VIEW_ROLES
    template_name = "evaluations/scenario_index.html"
    context_object_name = "versions"
    paginate_by = 50

    def get_queryset(self):
        return metric_versions_with_scenarios()


# After "Generate", the scenario page polls until the set is written or this many seconds pass
# (a writer that fails leaves the set incomplete; the page then says so instead of polling on).
GENERATION_WATCH_SECONDS = 600


class MetricScenarioListView(RoleRequiredMixin, TemplateView):
    required_roles = VIEW_ROLES

    def get_template_names(self):
        if self.request.htmx:
            return ["evaluations/_scenario_table.html"]
        return ["evaluations/scenario_list.html"]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        version = get_object_or_404(metric_versions_with_metric(), pk=kwargs["pk"])
        show_retired = self.request.GET.get("retired") == "1"
        try:
            started = int(self.request.GET.get("generating", ""))
        except ValueError:
            started = 0
        watching = 0 < time.time() - started < GENERATION_WATCH_SECONDS if started else False
        complete = scenario_set_complete(metric_version=version)
        context.update(
            version=version,
            scenarios=scenario_list(metric_version=version, include_retired=show_retired),
            show_retired=show_retired,
            generating=watching and not complete,
            generation_finished=bool(started) and complete,
            generation_stalled=bool(started) and not watching and not complete,
        )
        return context


class ScenarioGenerateView(RoleRequiredMixin, View):
    required_roles = CURATE_ROLES

    def post(self, request, pk: int):
        version = get_object_or_404(metric_versions_with_metric(), pk=pk)
        scenario_services.scenarios_generate_enqueue(metric_version=version)
        messages.info(
            request,
            _("Scenario generation started in the background; this page updates as they arrive."),
        )
        url = reverse("evaluations:metric-scenarios", kwargs={"pk": version.pk})
        return redirect(f"{url}?generating={int(time.time())}")


class ScenarioDetailView(RoleRequiredMixin, DetailView):
    required_roles = VIEW_ROLES
    template_name = "evaluations/scenario_detail.html"
    context_object_name = "scenario"

    def get_queryset(self):
        return scenarios_with_people()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_review_translation"] = user_has_role(self.request.user, Role.EXPERT_REVIEWER)
        context["can_translate"] = user_has_role(self.request.user, *CURATE_ROLES)
        return context


class ScenarioEditView(RoleRequiredMixin, View):
    required_roles = CURATE_ROLES
    template_name = "evaluations/scenario_form.html"

    def get(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        return render(
            request,
            self.template_name,
            {"scenario": scenario, "form": ScenarioForm(instance=scenario)},
        )

    def post(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        # The form edits its own copy: `scenario` stays as stored, for the page and the service.
        form = ScenarioForm(
            request.POST, instance=get_object_or_404(scenarios_with_people(), pk=pk)
        )
        if form.is_valid():
            try:
                saved = scenario_edits.scenario_update(
                    scenario=scenario, actor=request.user, **form.cleaned_data
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                if saved.pk != scenario.pk:
                    messages.success(
                        request,
                        _(
                            "Saved as a new scenario: the old one is kept, retired, because "
                            "conversations already used it."
                        ),
                    )
                else:
                    messages.success(request, _("Scenario saved."))
                return redirect("evaluations:scenario-detail", pk=saved.pk)
        return render(request, self.template_name, {"scenario": scenario, "form": form})


class ScenarioRetireView(RoleRequiredMixin, View):
    required_roles = CURATE_ROLES

    def post(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        try:
            scenario_edits.scenario_retire(scenario=scenario, actor=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, _("Scenario retired; regenerate it to fill its place."))
        return redirect("evaluations:scenario-detail", pk=scenario.pk)


class ScenarioRegenerateView(RoleRequiredMixin, View):
    required_roles = CURATE_ROLES

    def post(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        try:
            successor = scenario_edits.scenario_regenerate_start(
                scenario=scenario, actor=request.user
            )
        except ApplicationError as error:
            messages.error(request, error.message)
            return redirect("evaluations:scenario-detail", pk=scenario.pk)
        scenario_services.scenarios_generate_enqueue(metric_version=scenario.metric_version)
        messages.info(request, _("A new scenario is being written in the background."))
        return redirect("evaluations:scenario-detail", pk=successor.pk)
