"""Run pages for maintainers (scenario pages: scenario_views): validate, call a service, render."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.generic import DetailView, ListView, TemplateView

from core.exceptions import ApplicationError
from core.ids import identifier_parse
from core.roles import Role, RoleRequiredMixin, user_has_role
from metrics_registry.selectors import release_list

from .evidence_support import evidence_problems
from .forms import RunCreateForm
from .models import RubricGrading, SwapStudy
from .scenario_views import CURATE_ROLES, VIEW_ROLES
from .selectors import (
    conversation_fidelity,
    release_demographics,
    run_batch_roles,
    run_batches,
    run_conversations_for_reading,
    run_failed_conversations,
    run_failed_rubric_responses,
    run_figures_stored,
    run_progress,
    run_unverified_conversations,
    runs_for_detail,
    runs_for_list,
    runs_of_releases,
    runs_use_offline_model,
)
from .services import runs as run_services
from .services.comparison import runs_compare
from .services.estimates import run_estimate
from .services.official import run_set_headline, run_set_official
from .services.panel import conversation_panel, run_panel
from .services.rubric_scores import run_rubric_scores


class ReleaseDemographicsView(RoleRequiredMixin, TemplateView):
    required_roles = VIEW_ROLES
    template_name = "evaluations/release_demographics.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        # Through release_list, so a draft is a 404 for everyone who may not see drafts.
        release = get_object_or_404(release_list(user=self.request.user), pk=kwargs["pk"])
        spread = release_demographics(release=release)
        context.update(
            release=release,
            spread=spread,
            tables=[
                ("Age context", spread.age_contexts.most_common()),
                ("Age", sorted(spread.age_bands.items())),
                ("Gender", spread.genders.most_common()),
                ("Background", spread.backgrounds.most_common(30)),
            ],
        )
        return context


class RunListView(RoleRequiredMixin, ListView):
    required_roles = CURATE_ROLES
    template_name = "evaluations/run_list.html"
    context_object_name = "runs"
    paginate_by = 25

    def get_queryset(self):
        return runs_for_list()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_create"] = user_has_role(self.request.user, *RunCreateView.required_roles)
        return context


class RunDetailView(RoleRequiredMixin, DetailView):
    required_roles = CURATE_ROLES
    template_name = "evaluations/run_detail.html"
    context_object_name = "run"

    def get_queryset(self):
        return runs_for_detail()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        run = self.object
        context["progress"] = run_progress(run=run)
        context["batch_roles"] = run_batch_roles(run)
        context["batches"] = run_batches(run)
        draft = run.status == "draft"
        context["plan"] = run_services.run_plan(run) if draft else None
        context["estimate"] = run_estimate(run) if draft else None
        seats = run_panel(run)
        context["panel_seats"] = seats if len(seats) > 1 else None
        context["failed"] = run_failed_conversations(run)[:20]
        unverified = run_unverified_conversations(run)
        context["unverified_count"] = unverified.count()
        context["unverified"] = unverified[:20]
        context["failed_rubric"] = run_failed_rubric_responses(run)[:20]
        context["rubric_scores"] = run_rubric_scores(run=run)
        context["perms_maintainer"] = user_has_role(self.request.user, Role.MAINTAINER)
        context["swap_study"] = SwapStudy.objects.filter(swap_run=run).first()
        context["figures_stored"] = run.status == "completed" and run_figures_stored(run)
        if self.request.htmx:
            self.template_name = "evaluations/_run_live.html"
        return context


class ConversationDetailView(RoleRequiredMixin, DetailView):
    """One conversation: transcript, every judge reading with its checked quotes, measured
    anchor coverage, and why it failed when it did."""

    required_roles = CURATE_ROLES
    template_name = "evaluations/conversation_detail.html"
    context_object_name = "conversation"

    def get_queryset(self):
        return run_conversations_for_reading(self.kwargs["run_pk"])

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        conversation = self.object
        context["panel"] = conversation_panel(conversation.run, conversation.judgments.all())
        context["fidelity"] = conversation_fidelity(conversation)
        context["evidence_problems"] = evidence_problems(conversation.judgments.all())
        return context


class RunActionView(RoleRequiredMixin, View):
    """launch (start or resume), retry failed conversations, pause, cancel."""

    required_roles = (Role.MAINTAINER,)
    ACTIONS = {
        "launch": (lambda run: run_services.run_launch(run=run), gettext_lazy("Run started.")),
        "retry": (
            lambda run: run_services.run_retry_failed(run=run),
            gettext_lazy("Failed conversations queued again."),
        ),
        "pause": (lambda run: run_services.run_pause(run=run), gettext_lazy("Run paused.")),
        "cancel": (lambda run: run_services.run_cancel(run=run), gettext_lazy("Run cancelled.")),
    }

    def post(self, request, pk: int, action: str):
        run = get_object_or_404(runs_for_detail(), pk=pk)
        if action not in self.ACTIONS:
            return redirect(reverse("evaluations:run-detail", kwargs={"pk": pk}))
        service, done = self.ACTIONS[action]
        try:
            service(run)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, done)
        return redirect(reverse("evaluations:run-detail", kwargs={"pk": pk}))


class RunOfficialView(RoleRequiredMixin, View):
    """Designate a run as the public one of its release, or withdraw it (audited who/when)."""

    required_roles = (Role.MAINTAINER,)

    def post(self, request, pk: int):
        run = get_object_or_404(runs_for_detail(), pk=pk)
        if "headline" in request.POST:
            return self.headline(request, run)
        official = request.POST.get("official") == "1"
        try:
            run_set_official(run=run, official=official, changed_by=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                _("Run is official: public pages show it.")
                if official
                else _("Run withdrawn from public pages."),
            )
        return redirect(reverse("evaluations:run-detail", kwargs={"pk": pk}))

    def headline(self, request, run):
        headline = request.POST.get("headline") == "1"
        try:
            run_set_headline(run=run, headline=headline, changed_by=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                _("Public pages show this run by default for its release.")
                if headline
                else _("Headline mark removed: public pages show the release's most complete run."),
            )
        return redirect(reverse("evaluations:run-detail", kwargs={"pk": run.pk}))


class RunCompareView(RoleRequiredMixin, TemplateView):
    required_roles = CURATE_ROLES
    template_name = "evaluations/run_compare.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["runs"] = runs_of_releases()[:200]
        a = identifier_parse(self.request.GET.get("a"), name="a")
        b = identifier_parse(self.request.GET.get("b"), name="b")
        if a is not None and b is not None:
            run_a = get_object_or_404(runs_for_detail(), pk=a)
            run_b = get_object_or_404(runs_for_detail(), pk=b)
            context.update(run_a=run_a, run_b=run_b)
            try:
                context["comparisons"] = runs_compare(run_a=run_a, run_b=run_b)
            except ApplicationError as error:
                context["error"] = error.message
            context["offline"] = runs_use_offline_model(run_a, run_b)
        return context


class RunCreateView(RoleRequiredMixin, View):
    required_roles = (Role.MAINTAINER,)
    template_name = "evaluations/run_form.html"

    def get(self, request):
        return render(request, self.template_name, {"form": RunCreateForm()})

    def post(self, request):
        form = RunCreateForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                run = run_services.run_create(
                    name=data["name"],
                    release=data["release"],
                    metric_versions=list(data["metric_versions"]),
                    rubric_items=list(data["rubric_items"]),
                    targets=list(data["targets"]),
                    simulator=data["simulator"],
                    judge=data["judge"],
                    fidelity_checker=data["fidelity_checker"],
                    turns=data["turns"],
                    replicates=data["replicates"],
                    judgments_per_conversation=data["judgments_per_conversation"],
                    use_anchors=not data["no_anchors"],
                    rubric_grading=data["rubric_grading"] or RubricGrading.PER_CRITERION,
                    use_batch=data["use_batch"],
                    spending_cap=data["spending_cap"],
                    further_judges=[
                        (judge, data["judgments_per_conversation"])
                        for judge in data["further_judges"]
                    ],
                    created_by=request.user,
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.info(request, _("Run created: check the plan below, then launch it."))
                return redirect("evaluations:run-detail", pk=run.pk)
        return render(request, self.template_name, {"form": form})
