"""The review of a machine-translated scenario, from its workspace page
(`evaluations.services.translation`)."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views import View

from core.exceptions import ApplicationError
from core.languages import language_display_name
from core.roles import Role, RoleRequiredMixin

from .selectors import scenarios_with_people
from .services.translation import scenario_translation_enqueue, scenario_translation_review

# Who may ask for a translation: those who curate scenarios (`scenario_views.CURATE_ROLES`).
TRANSLATE_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class ScenarioTranslateView(RoleRequiredMixin, View):
    """A curator asks the scenario writer for the scenario in another language; the variant
    is written in the background as a machine translation, kept out of runs until reviewed."""

    required_roles = TRANSLATE_ROLES

    def post(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        try:
            language = scenario_translation_enqueue(
                scenario=scenario,
                language=request.POST.get("language", ""),
                country=request.POST.get("country", ""),
            )
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.info(
                request,
                _(
                    "The %(language)s translation is being written in the background; it will "
                    "appear among the metric's scenarios, waiting for review."
                )
                % {"language": language_display_name(language)},
            )
        return redirect("evaluations:scenario-detail", pk=scenario.pk)


class ScenarioTranslationReviewView(RoleRequiredMixin, View):
    """An expert reviewer who reads the scenario's language marks its translation reviewed."""

    required_roles = (Role.EXPERT_REVIEWER,)

    def post(self, request, pk: int):
        scenario = get_object_or_404(scenarios_with_people(), pk=pk)
        try:
            scenario_translation_review(
                scenario=scenario,
                reviewer=request.user,
                declare_reads_language=request.POST.get("reads_language") == "on",
            )
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, _("Translation reviewed: the scenario can now be run."))
        return redirect("evaluations:scenario-detail", pk=scenario.pk)
