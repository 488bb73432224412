"""Thin views over the review services: the rater's screen, queue management, exports."""

import itertools

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views import View
from django.views.generic import DetailView, FormView, ListView, TemplateView

from core.csvsafe import csv_lines
from core.exceptions import ApplicationError
from core.languages import language_display_name, languages_pooled_note
from core.roles import Role, RoleRequiredMixin, user_has_role
from core.selectors import languages_read
from core.validators import fields_control_character_message
from metrics_registry.models import Metric

from . import agreement, selectors, services
from .forms import KeepForm, QueueForm, RunQueueForm
from .kinds import adapter_for
from .models import Assignment, RatingQueue
from .services.assignments import undo_window


class RaterMixin(RoleRequiredMixin):
    """Any signed-in user; which queues they may rate is decided per queue (group, named)."""

    def rateable_queue(self, pk: int) -> RatingQueue:
        return get_object_or_404(selectors.queue_list_rateable(user=self.request.user), pk=pk)

    def own_assignment(self, pk: int) -> Assignment:
        return get_object_or_404(
            Assignment.objects.select_related("queue", "item"), pk=pk, rater=self.request.user
        )


class ManagerMixin(RoleRequiredMixin):
    required_roles = (Role.RESEARCHER, Role.MAINTAINER)


def _answers_from(post) -> dict[str, str]:
    prefix = "answer-"
    return {key[len(prefix) :]: value for key, value in post.items() if key.startswith(prefix)}


class RaterQueueListView(RaterMixin, TemplateView):
    template_name = "review/ratingqueue_rater_list.html"

    def get_context_data(self, **kwargs):
        user = self.request.user
        queues = [
            {
                "queue": queue,
                "progress": selectors.queue_progress(queue),
                "done": selectors.rater_done_count(queue=queue, rater=user),
            }
            for queue in selectors.queue_list_rateable(user=user)
        ]
        return {
            **super().get_context_data(**kwargs),
            "queues": queues,
            "languages_read": languages_read(user=user),
        }


class RateView(RaterMixin, TemplateView):
    """One item at a time: the item, its questions, progress, skip and undo."""

    template_name = "review/rate.html"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        self.queue = self.rateable_queue(kwargs["pk"])
        try:
            self.assignment = services.assignment_claim(queue=self.queue, rater=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
            return redirect("review:rater-queues")
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        queue, assignment, user = self.queue, self.assignment, self.request.user
        context = {
            **super().get_context_data(**kwargs),
            "queue": queue,
            "assignment": assignment,
            "progress": selectors.queue_progress(queue),
            "done": selectors.rater_done_count(queue=queue, rater=user),
            "can_undo": selectors.rater_can_undo(queue=queue, rater=user),
        }
        if assignment is None:
            context["rater_languages"] = selectors.rater_languages(queue=queue, rater=user)
            return context
        item = assignment.item
        adapter = adapter_for(item.kind)
        draft = getattr(assignment, "draft", None)
        chosen = draft.answers if draft else {}
        context.update(
            item=item,
            item_template=adapter.template_name,
            questions=[
                {
                    "question": question,
                    "number": number,
                    "choices": [
                        {"choice": choice, "key": index, "checked": chosen.get(question.name)}
                        for index, choice in enumerate(question.choices, start=1)
                    ],
                }
                for number, question in enumerate(
                    (q for q in adapter.questions(item) if q.shown), start=1
                )
            ],
            draft_comment=draft.comment if draft else "",
            **adapter.render_context(item, assignment),
        )
        return context


class AssignmentSubmitView(RaterMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        assignment = self.own_assignment(pk)
        try:
            services.rating_submit(
                assignment=assignment,
                rater=request.user,
                answers=_answers_from(request.POST),
                comment=request.POST.get("comment", ""),
            )
            minutes = max(1, round(undo_window().total_seconds() / 60))
            messages.success(
                request,
                ngettext(
                    "Rating saved. Press U within %(minutes)s minute to undo it.",
                    "Rating saved. Press U within %(minutes)s minutes to undo it.",
                    minutes,
                )
                % {"minutes": minutes},
            )
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("review:rate", pk=assignment.queue_id)


class AssignmentSkipView(RaterMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        assignment = self.own_assignment(pk)
        try:
            services.assignment_skip(assignment=assignment, rater=request.user)
            messages.info(request, _("Skipped; another rater will take that item."))
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("review:rate", pk=assignment.queue_id)


class AssignmentDraftView(RaterMixin, View):
    """Autosave target: the screen posts the current choices every few seconds and on change."""

    def post(self, request: HttpRequest, pk: int) -> JsonResponse:
        assignment = self.own_assignment(pk)
        if problem := fields_control_character_message(request.POST):
            return JsonResponse({"error": problem}, status=400)
        try:
            draft = services.rating_draft_save(
                assignment=assignment,
                rater=request.user,
                answers=_answers_from(request.POST),
                comment=request.POST.get("comment", ""),
            )
        except ApplicationError as error:
            return JsonResponse({"error": error.message}, status=409)
        return JsonResponse({"saved_at": draft.saved_at.isoformat(), "answers": draft.answers})


class RatingUndoView(RaterMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        queue = self.rateable_queue(pk)
        try:
            services.rating_undo_last(queue=queue, rater=request.user)
            messages.info(
                request, _("Your last rating was taken back; change it and submit again.")
            )
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("review:rate", pk=queue.pk)


class QueueListView(ManagerMixin, ListView):
    template_name = "review/ratingqueue_list.html"
    context_object_name = "queues"
    paginate_by = 25

    def get_queryset(self):
        return selectors.queue_list()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["rows"] = [
            {"queue": queue, "progress": selectors.queue_progress(queue)}
            for queue in context["queues"]
        ]
        return context


class QueueCreateView(ManagerMixin, FormView):
    template_name = "review/ratingqueue_form.html"
    form_class = QueueForm

    def form_valid(self, form):
        try:
            queue = services.queue_create(created_by=self.request.user, **form.service_kwargs())
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        messages.success(self.request, queue_created_message(queue.items.count()))
        return redirect("review:queue-detail", pk=queue.pk)


class RunQueueCreateView(ManagerMixin, FormView):
    """A run's calibration sample or triage queue (`review.services.calibration`)."""

    template_name = "review/run_queue_form.html"
    form_class = RunQueueForm

    def form_valid(self, form):
        data = form.cleaned_data
        common = {
            "run": data["run"],
            "name": data["name"],
            "created_by": self.request.user,
            "required_ratings": data["required_ratings"],
            "eligible_group": data["eligible_group"],
            "seed": data["seed"],
        }
        try:
            if data["purpose"] == "triage":
                queue = services.triage_queue_create(size=data["sample_size"], **common)
            else:
                queue = services.calibration_queue_create(
                    size=data["sample_size"], fraction=data["sample_fraction"], **common
                )
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        messages.success(self.request, queue_created_message(queue.items.count()))
        return redirect("review:queue-detail", pk=queue.pk)


class QueueDetailView(ManagerMixin, DetailView):
    template_name = "review/ratingqueue_detail.html"
    context_object_name = "queue"

    def get_queryset(self):
        return selectors.queue_list()

    # What a kind's queue page adds (its adapter's `queue_section`), computed only for it.
    sections = {
        "ranking": agreement.simulator_ranking,  # read per language by `_ranking`
        "poor_scenarios": selectors.scenarios_rated_poor,
        "consensus": selectors.criterion_consensus_for,
    }

    def get_context_data(self, **kwargs):
        queue = self.object
        section = adapter_for(queue.kind).queue_section
        if section == "ranking":
            shown = self._ranking(queue)
        else:
            shown = {section: self.sections[section](queue)} if section else {}
        return {
            **super().get_context_data(**kwargs),
            "progress": selectors.queue_progress(queue),
            "figures": agreement.queue_figures(queue),
            "raters": queue.eligible_raters.all(),
            **{name: [] for name in self.sections},
            **shown,
        }

    def _ranking(self, queue) -> dict:
        """The simulator ranking over one language's items (``?lang=``), or over them all
        saying which languages it pools; an unknown ``?lang=`` shows them all."""
        languages = agreement.ranking_languages(queue)
        raw = self.request.GET.get("lang", "")
        language = raw if raw in languages and len(languages) > 1 else ""
        return {
            "ranking": agreement.simulator_ranking(queue, language=language),
            "ranking_language": language_display_name(language) if language else "",
            "ranking_pooled": (
                languages_pooled_note(languages) if len(languages) > 1 and not language else ""
            ),
            "ranking_switch": [
                (tag, language_display_name(tag), tag == language) for tag in languages
            ]
            if len(languages) > 1
            else [],
        }


class QueueStatusView(ManagerMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        queue = get_object_or_404(RatingQueue, pk=pk)
        try:
            services.queue_set_status(queue=queue, status=request.POST.get("status", ""))
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("review:queue-detail", pk=queue.pk)


class QueueExportView(ManagerMixin, View):
    """Every rating of the queue, undone ones included and marked, one row per rating."""

    def get(self, request: HttpRequest, pk: int) -> StreamingHttpResponse:
        queue = get_object_or_404(RatingQueue, pk=pk)
        rows = itertools.chain([agreement.export_header(queue)], agreement.export_rows(queue))
        response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="queue-{queue.pk}-ratings.csv"'
        return response


class ContestedListView(ManagerMixin, TemplateView):
    template_name = "review/contested_list.html"

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "rows": [
                {"metric": metric, "last_change": list(metric.status_changes.all())[-1:]}
                for metric in selectors.metrics_contested()
            ],
            "can_keep": user_has_role(self.request.user, Role.MAINTAINER),
            "form": KeepForm(),
        }


class ContestedKeepView(RoleRequiredMixin, View):
    required_roles = (Role.MAINTAINER,)

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        metric = get_object_or_404(Metric, pk=pk)
        if "revoke" in request.POST:
            services.contested_metric_keep_revoke(metric=metric, revoked_by=request.user)
            messages.info(
                request,
                _("%(metric_key)s will be left out of new release drafts.")
                % {"metric_key": metric.key},
            )
            return redirect("review:contested")
        form = KeepForm(request.POST)
        try:
            if not form.is_valid():
                raise ApplicationError(_("Write why the metric stays (at least ten characters)."))
            services.contested_metric_keep(
                metric=metric, reason=form.cleaned_data["reason"], kept_by=request.user
            )
            messages.success(
                request,
                _("%(metric_key)s stays in new release drafts.") % {"metric_key": metric.key},
            )
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("review:contested")


class PrioritiesView(ManagerMixin, TemplateView):
    """User panel priorities against clinicians' rubric weights, per behaviour dimension."""

    template_name = "review/priorities.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), **agreement.priorities_comparison()}


def queue_created_message(count: int) -> str:
    return ngettext(
        "Queue created with %(count)s item.", "Queue created with %(count)s items.", count
    ) % {"count": count}
