from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.generic import FormView, ListView

from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin

from .forms import ModelConfigurationForm
from .models import CallOutcome, LLMCall, ModelConfiguration
from .selectors import configuration_list_with_usage, llm_call_list
from .services import configuration_save, configuration_test

USAGE_WINDOW = timedelta(hours=24)


class ConfigurationListView(RoleRequiredMixin, ListView):
    required_roles = (Role.MAINTAINER,)
    template_name = "llm/modelconfiguration_list.html"
    context_object_name = "configurations"

    def get_queryset(self) -> QuerySet[ModelConfiguration]:
        return configuration_list_with_usage(since=timezone.now() - USAGE_WINDOW)


class ConfigurationFormMixin(RoleRequiredMixin, FormView):
    """Create and edit share one form; the service saves the configuration and its roles."""

    required_roles = (Role.MAINTAINER,)
    template_name = "llm/modelconfiguration_form.html"
    form_class = ModelConfigurationForm
    instance: ModelConfiguration | None = None

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs["instance"] = self.instance
        return kwargs

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["configuration"] = self.instance
        return context

    def form_valid(self, form: ModelConfigurationForm) -> HttpResponse:
        try:
            configuration = configuration_save(
                configuration=form.instance,
                roles=form.cleaned_data["roles"],
                default_roles=form.cleaned_data["default_roles"],
                looked_up=form.host_lookup,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
            return self.form_invalid(form)
        except ApplicationError as exc:
            form.add_error(None, exc.message)
            return self.form_invalid(form)
        messages.success(
            self.request,
            _("Saved the model configuration %(configuration_name)s.")
            % {"configuration_name": configuration.name},
        )
        if form.host_lookup and form.host_lookup.note:
            messages.warning(self.request, form.host_lookup.note)
        return redirect(reverse("llm:configuration-list"))


class ConfigurationCreateView(ConfigurationFormMixin, FormView):
    pass


class ConfigurationUpdateView(ConfigurationFormMixin, FormView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        self.instance = get_object_or_404(ModelConfiguration, pk=kwargs["pk"])
        return super().dispatch(request, *args, **kwargs)


class ConfigurationTestView(RoleRequiredMixin, View):
    """ "Test this endpoint": one small structured call, its raw reply and what failed."""

    required_roles = (Role.MAINTAINER,)

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        configuration = get_object_or_404(ModelConfiguration, pk=pk)
        result = configuration_test(configuration=configuration)
        return render(
            request,
            "llm/modelconfiguration_form.html",
            {
                "form": ModelConfigurationForm(instance=configuration),
                "configuration": configuration,
                "endpoint_test": result,
            },
        )


class CallFilterForm(forms.Form):
    outcome = forms.ChoiceField(
        choices=[("", gettext_lazy("Any outcome")), *CallOutcome.choices],
        required=False,
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
    )
    configuration = forms.ModelChoiceField(
        queryset=ModelConfiguration.objects.order_by("name"),
        required=False,
        empty_label="Any configuration",
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
    )
    # Set by a run page's "Model call log" link: the calls made for that evaluation run.
    run = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class CallListView(RoleRequiredMixin, ListView):
    required_roles = (Role.MAINTAINER, Role.RESEARCHER)
    template_name = "llm/llmcall_list.html"
    context_object_name = "calls"
    paginate_by = 50

    def get_queryset(self) -> QuerySet[LLMCall]:
        self.filter_form = CallFilterForm(self.request.GET or None)
        filters = self.filter_form.cleaned_data if self.filter_form.is_valid() else {}
        configuration = filters.get("configuration")
        self.run_id = filters.get("run")
        # The call list shows no prompts; leaving them out keeps a page of 50 rows light.
        calls = llm_call_list(
            outcome=filters.get("outcome") or None,
            configuration_id=configuration.pk if configuration else None,
        ).defer("messages", "parameters", "parsed_json")
        if self.run_id:
            calls = calls.filter(run_id=self.run_id)
        return calls

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["filter_form"] = self.filter_form
        context["run_id"] = self.run_id
        query = self.request.GET.copy()
        query.pop("page", None)
        context["filter_query"] = query.urlencode()
        return context
