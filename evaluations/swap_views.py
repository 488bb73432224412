"""The swap study form: a maintainer re-runs a sample of a completed run with another judge or
simulator (`evaluations.services.swap`)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views import View

from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin

from .forms import SwapStudyForm
from .selectors import runs_for_detail
from .services.swap import swap_base_check, swap_study_create


class SwapStudyCreateView(RoleRequiredMixin, View):
    """Choose an alternative judge and/or simulator for a sample of a completed run: creates the
    study and its draft re-run, whose page shows the plan and the launch button."""

    required_roles = (Role.MAINTAINER,)
    template_name = "evaluations/swap_study_form.html"

    def _base_or_refusal(self, request, pk: int):
        """The run, or a redirect to its page saying why it cannot be a study's base."""
        run = get_object_or_404(runs_for_detail(), pk=pk)
        try:
            swap_base_check(base_run=run)
        except ApplicationError as error:
            messages.error(request, error.message)
            return None, redirect("evaluations:run-detail", pk=run.pk)
        return run, None

    def get(self, request, pk: int):
        run, refusal = self._base_or_refusal(request, pk)
        if refusal:
            return refusal
        return render(request, self.template_name, {"form": SwapStudyForm(), "run": run})

    def post(self, request, pk: int):
        run, refusal = self._base_or_refusal(request, pk)
        if refusal:
            return refusal
        form = SwapStudyForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                study = swap_study_create(
                    base_run=run,
                    judge=data["judge"],
                    simulator=data["simulator"],
                    sample_size=data["sample_size"],
                    seed=data["seed"],
                    created_by=request.user,
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.info(
                    request,
                    _(
                        "Swap study created (%(scenarios)s scenarios, seed "
                        "%(seed)s): check the plan below, then launch the re-run."
                    )
                    % {"scenarios": study.sample_size, "seed": study.seed},
                )
                return redirect("evaluations:run-detail", pk=study.swap_run_id)
        return render(request, self.template_name, {"form": form, "run": run})
