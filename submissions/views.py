import secrets

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import DetailView, FormView, ListView

from core.exceptions import ApplicationError
from core.middleware import bad_request
from core.roles import Role, RoleRequiredMixin, user_has_role
from core.validators import fields_control_character_message

from . import selectors, services
from .forms import CandidateDecisionForm, CandidateForm, SubmissionForm
from .models import CandidateStatus, MetricCandidate, SubmissionStatus
from .similarity import NEAR_DUPLICATE_SCORE, similar_metrics_for_submission

# The status page polls while the platform works on the submission.
WORKING_STATUSES = {SubmissionStatus.SUBMITTED, SubmissionStatus.DRAFTING}


class ContributorMixin(RoleRequiredMixin):
    required_roles = (Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER)


class SubmissionListView(ContributorMixin, ListView):
    template_name = "submissions/submission_list.html"
    context_object_name = "submissions"
    paginate_by = 25

    def get_queryset(self):
        return selectors.submission_list_own(user=self.request.user)


class SubmissionFormMixin(ContributorMixin):
    """Create and edit share one form; the pressed button decides between saving and submitting."""

    form_class = SubmissionForm
    template_name = "submissions/submission_form.html"

    def save(self, form):
        raise NotImplementedError

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "submitting": "submit" in self.request.POST}

    def form_valid(self, form):
        try:
            submission = self.save(form)
            if getattr(self, "repeated", False):
                # The same form arrived twice: the first POST did the work; show its result.
                return redirect("submissions:detail", pk=submission.pk)
            if "submit" in self.request.POST:
                services.submission_submit(submission=submission, actor=self.request.user)
                messages.success(
                    self.request,
                    _("Thank you. Your submission is in; metric drafting has started."),
                )
            else:
                messages.success(self.request, _("Draft saved."))
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        return redirect("submissions:detail", pk=submission.pk)


class SubmissionCreateView(SubmissionFormMixin, FormView):
    def get_initial(self):
        return {**super().get_initial(), "form_token": secrets.token_urlsafe(24)}

    def save(self, form):
        self.object, created = services.submission_create_once(
            contributor=self.request.user,
            creation_token=form.cleaned_data["form_token"],
            saved_as_draft="submit" not in self.request.POST,
            **form.service_kwargs(),
        )
        self.repeated = not created
        return self.object


class SubmissionUpdateView(SubmissionFormMixin, FormView):
    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            self.object = get_object_or_404(
                selectors.submission_list_own(user=request.user), pk=kwargs["pk"]
            )
            if not self.object.is_editable:
                messages.warning(request, _("This submission can no longer be edited."))
                return redirect("submissions:detail", pk=self.object.pk)
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "instance": self.object}

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "submission": self.object}

    def save(self, form):
        return services.submission_update(
            submission=self.object, actor=self.request.user, **form.service_kwargs()
        )


class SubmissionDetailView(ContributorMixin, DetailView):
    context_object_name = "submission"

    def get_queryset(self):
        return selectors.submission_list_for(user=self.request.user).prefetch_related(
            "citations", "suggested_subareas__area", "events__actor"
        )

    def render_to_response(self, context, **response_kwargs):
        response = super().render_to_response(context, **response_kwargs)
        if self.request.htmx and not context["working"]:
            # The background work ended: reload the whole page to show what it produced.
            response["HX-Refresh"] = "true"
        return response

    def get_template_names(self):
        if self.request.htmx:
            return ["submissions/_submission_status.html"]
        return ["submissions/submission_detail.html"]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        submission = self.object
        context["is_owner"] = submission.contributor_id == self.request.user.pk
        context["can_retry"] = context["is_owner"] or user_has_role(
            self.request.user, Role.RESEARCHER, Role.MAINTAINER
        )
        context["working"] = submission.status in WORKING_STATUSES
        context["steps"] = status_steps(submission.status)
        if not self.request.htmx:
            context["candidates"] = submission.candidates.select_related(
                "label_category", "metric"
            ).prefetch_related("subareas")
            context["similar"] = similar_metrics_for_submission(submission)
        return context


def status_steps(status: str) -> list[dict]:
    """The progress line on the status page: submitted → drafting → in review → decision."""
    order = [
        (SubmissionStatus.SUBMITTED, "Submitted"),
        (SubmissionStatus.DRAFTING, "Drafting metrics"),
        (SubmissionStatus.IN_REVIEW, "In review"),
        ("decision", "Decision"),
    ]
    reached = {
        SubmissionStatus.DRAFT: 0,
        SubmissionStatus.SUBMITTED: 1,
        SubmissionStatus.DRAFTING: 2,
        SubmissionStatus.DRAFTING_FAILED: 2,
        SubmissionStatus.IN_REVIEW: 3,
        SubmissionStatus.CHANGES_REQUESTED: 4,
        SubmissionStatus.ACCEPTED: 4,
        SubmissionStatus.DECLINED: 4,
        SubmissionStatus.WITHDRAWN: 0,
    }[status]
    steps = []
    for index, (key, label) in enumerate(order, start=1):
        if key == "decision" and reached >= 4:
            label = SubmissionStatus(status).label
        steps.append(
            {
                "label": label,
                "done": index < reached or (index == reached == 4),
                "current": index == reached and reached < 4,
                "failed": key == SubmissionStatus.DRAFTING
                and status == SubmissionStatus.DRAFTING_FAILED,
            }
        )
    return steps


class SubmissionActionView(ContributorMixin, View):
    """POST-only actions on the contributor's own submission."""

    def post(self, request, pk: int, action: str):
        submission = get_object_or_404(selectors.submission_list_own(user=request.user), pk=pk)
        if problem := fields_control_character_message(request.POST):
            return bad_request(request, problem)
        try:
            if action == "submit":
                services.submission_submit(submission=submission, actor=request.user)
                messages.success(request, _("Submitted. Metric drafting has started."))
            elif action == "withdraw":
                services.submission_withdraw(
                    submission=submission,
                    actor=request.user,
                    reason=request.POST.get("reason", "").strip(),
                )
                messages.info(request, _("Your submission has been withdrawn."))
            elif action == "retry":
                services.submission_retry_drafting(submission=submission, actor=request.user)
                messages.info(request, _("Drafting has been started again."))
            else:
                messages.error(request, _("Unknown action."))
        except ApplicationError as error:
            messages.error(request, error.message)
        return HttpResponseRedirect(reverse("submissions:detail", kwargs={"pk": pk}))


class ResearcherMixin(RoleRequiredMixin):
    required_roles = (Role.RESEARCHER, Role.MAINTAINER)


class CandidateListView(ResearcherMixin, ListView):
    template_name = "submissions/candidate_list.html"
    context_object_name = "candidates"
    paginate_by = 50

    def get_queryset(self):
        self.status = self.request.GET.get("status", CandidateStatus.PENDING)
        if self.status not in CandidateStatus.values:
            self.status = CandidateStatus.PENDING
        return selectors.candidate_list_for_review(status=self.status)

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "status": self.status,
            "statuses": CandidateStatus.choices,
        }


class CandidateReviewView(ResearcherMixin, View):
    """Edit, rate and decide one candidate, with its submission and similar metrics beside it."""

    template_name = "submissions/candidate_review.html"

    def get_candidate(self, pk: int):
        return get_object_or_404(selectors.candidate_list_for_review(status=""), pk=pk)

    def render(self, candidate, form, decision_form, status=200):
        context = {
            "candidate": candidate,
            "submission": candidate.submission,
            "form": form,
            "decision_form": decision_form,
            "similar": similar_metrics_for_submission(candidate.submission),
            "near_duplicate_score": NEAR_DUPLICATE_SCORE,
            "changes": selectors.candidate_changes(candidate),
            "siblings": candidate.submission.candidates.exclude(pk=candidate.pk),
        }
        return TemplateResponse(self.request, self.template_name, context, status=status)

    def can_validate(self) -> bool:
        # The roles that may change a metric's validation status on its registry page.
        return user_has_role(self.request.user, Role.RESEARCHER, Role.MAINTAINER)

    def get(self, request, pk: int):
        candidate = self.get_candidate(pk)
        decision_form = CandidateDecisionForm(can_validate=self.can_validate())
        return self.render(candidate, CandidateForm(instance=candidate), decision_form)

    def post(self, request, pk: int):
        candidate = self.get_candidate(pk)
        form = CandidateForm(request.POST, instance=MetricCandidate.objects.get(pk=pk))
        decision_form = CandidateDecisionForm(request.POST, can_validate=self.can_validate())
        action = request.POST.get("action", "save")
        if not form.is_valid() or not decision_form.is_valid():
            return self.render(candidate, form, decision_form, status=400)
        reason = decision_form.cleaned_data["reason"]
        try:
            with transaction.atomic():
                if candidate.status == CandidateStatus.PENDING:
                    services.candidate_update(
                        candidate=candidate, actor=request.user, **form.service_kwargs()
                    )
                fidelity = form.cleaned_data["fidelity"]
                if fidelity:
                    services.candidate_rate_fidelity(
                        candidate=candidate, actor=request.user, fidelity=fidelity
                    )
                if action == "accept":
                    services.candidate_accept(
                        candidate=candidate,
                        actor=request.user,
                        note=reason,
                        validate=decision_form.cleaned_data.get("validate", False),
                    )
                elif action == "reject":
                    services.candidate_reject(
                        candidate=candidate, actor=request.user, reason=reason
                    )
                elif action == "return":
                    services.candidate_return(
                        candidate=candidate, actor=request.user, request=reason
                    )
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.render(candidate, form, decision_form, status=400)
        if action == "accept":
            candidate.refresh_from_db()
            messages.success(request, accepted_message(candidate.metric))
            return redirect("submissions:candidate-list")
        messages.success(
            request,
            {
                "reject": _("Candidate rejected."),
                "return": _("Sent back to the contributor with your request."),
            }.get(action, _("Changes saved.")),
        )
        if action == "save":
            return redirect("submissions:candidate-review", pk=pk)
        return redirect("submissions:candidate-list")


def accepted_message(metric) -> str:
    """Which metric an acceptance created, linked, so the researcher can go on from there."""
    link = format_html(
        '<a href="{}" data-testid="created-metric">{}</a>',
        reverse("metrics_registry:metric_detail", kwargs={"key": metric.key}),
        metric.key,
    )
    name = metric.current_version.name if metric.current_version_id else metric.key
    if metric.validation_status == "validated":
        message = _(
            "Accepted: created metric {link} “{name}”, validated: “Add all validated current "
            "versions” includes it in a release."
        )
        return format_html(message, link=link, name=name)
    message = _(
        "Accepted: created metric {link} “{name}”, {status}: validate it on its page before "
        "“Add all validated current versions” includes it in a release."
    )
    status = metric.get_validation_status_display().lower()
    return format_html(message, link=link, name=name, status=status)
