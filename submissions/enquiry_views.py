"""The public contact form and the researchers' triage of what arrives through it."""

from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import ListView

from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin

from . import enquiries
from .forms import EnquiryAnswerForm, EnquiryForm
from .models import EnquiryKind, EnquiryStatus


class ContactView(View):
    template_name = "submissions/contact.html"

    def get(self, request):
        kind = request.GET.get("kind")
        initial = {"kind": kind if kind in EnquiryKind.values else EnquiryKind.CONTACT}
        return TemplateResponse(request, self.template_name, {"form": EnquiryForm(initial=initial)})

    def post(self, request):
        form = EnquiryForm(request.POST)
        if not form.is_valid():
            return TemplateResponse(request, self.template_name, {"form": form}, status=400)
        if form.is_bot:
            # Answer a bot as a person would be answered, and store nothing.
            return TemplateResponse(request, "submissions/contact_thanks.html", {})
        try:
            enquiries.enquiry_create(
                client_address=request.META.get("REMOTE_ADDR", ""),
                # The answer is written in the language the message was written from.
                language=getattr(request, "LANGUAGE_CODE", "") or settings.LANGUAGE_CODE,
                **form.service_kwargs(),
            )
        except ApplicationError as error:
            form.add_error(None, error.message)
            return TemplateResponse(request, self.template_name, {"form": form}, status=429)
        return TemplateResponse(
            request, "submissions/contact_thanks.html", {"email": form.cleaned_data["email"]}
        )


class TriageMixin(RoleRequiredMixin):
    required_roles = (Role.RESEARCHER, Role.MAINTAINER)


class EnquiryListView(TriageMixin, ListView):
    template_name = "submissions/enquiry_list.html"
    context_object_name = "enquiries"
    paginate_by = 50

    def get_queryset(self):
        self.status = self.request.GET.get("status", EnquiryStatus.NEW)
        if self.status not in EnquiryStatus.values:
            self.status = EnquiryStatus.NEW
        return enquiries.enquiry_list(status=self.status)

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "status": self.status,
            "statuses": EnquiryStatus.choices,
        }


class EnquiryDetailView(TriageMixin, View):
    template_name = "submissions/enquiry_detail.html"

    def render(self, enquiry, form, status=200):
        context = {"enquiry": enquiry, "form": form}
        return TemplateResponse(self.request, self.template_name, context, status=status)

    def get(self, request, pk: int):
        enquiry = get_object_or_404(enquiries.enquiry_list(status=""), pk=pk)
        return self.render(enquiry, EnquiryAnswerForm())

    def post(self, request, pk: int):
        enquiry = get_object_or_404(enquiries.enquiry_list(status=""), pk=pk)
        form = EnquiryAnswerForm(request.POST)
        try:
            if request.POST.get("action") == "close":
                enquiries.enquiry_close(enquiry=enquiry, actor=request.user)
                messages.info(request, _("Closed without an answer."))
                return redirect("submissions:enquiry-list")
            if not form.is_valid():
                return self.render(enquiry, form, status=400)
            enquiries.enquiry_answer(
                enquiry=enquiry, actor=request.user, answer=form.cleaned_data["answer"]
            )
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.render(enquiry, form, status=400)
        messages.success(
            request, _("Answer sent to %(enquiry_email)s.") % {"enquiry_email": enquiry.email}
        )
        return redirect("submissions:enquiry-list")
