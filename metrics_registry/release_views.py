"""A maintainer's release pages: starting a release, choosing its metrics, publishing it."""

import re

from django.contrib import messages
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.generic import FormView, TemplateView

from core.exceptions import ApplicationError
from core.ids import identifiers_parse
from core.roles import Role, RoleRequiredMixin

from .forms import ReleaseForm
from .from_above import FromAboveMixin
from .models import MetricVersion, ValidationStatus
from .selectors import (
    metric_version_list_current,
    release_items,
)
from .services import (
    release_add_versions,
    release_assemble_from_current,
    release_assembly,
    release_changelog,
    release_create,
    release_publish,
    release_remove_versions,
)
from .views import ReleaseObjectMixin


class MaintainerRequiredMixin(RoleRequiredMixin):
    required_roles = (Role.MAINTAINER,)


def next_release_version(version: str) -> str:
    """The next minor version (1.2.3 → 1.3.0); empty when `version` is not MAJOR.MINOR.PATCH."""
    parts = version.split(".")
    if len(parts) != 3 or not all(re.fullmatch("[0-9]+", p) for p in parts):
        return ""
    return f"{parts[0]}.{int(parts[1]) + 1}.0"


def published_release_unchangeable(request, release) -> TemplateResponse:
    """What editing a published release says instead of a bare 404: why, and what to do."""
    return TemplateResponse(
        request,
        "metrics_registry/release_unchangeable.html",
        {"release": release, "next_version": next_release_version(release.version)},
        status=409,
    )


class ReleaseCreateView(MaintainerRequiredMixin, FormView):
    template_name = "metrics_registry/release_form.html"
    form_class = ReleaseForm

    def get_initial(self):
        # "Draft the next version" from a published release arrives with ?after=<version>.
        after = self.request.GET.get("after", "")
        following = next_release_version(after)
        return {"version": following} if following else {}

    def form_valid(self, form):
        try:
            release = release_create(created_by=self.request.user, **form.cleaned_data)
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        messages.success(
            self.request,
            _("Draft release %(release_version)s created.") % {"release_version": release.version},
        )
        return redirect("metrics_registry:release_edit", version=release.version)


class ReleaseEditView(FromAboveMixin, MaintainerRequiredMixin, ReleaseObjectMixin, TemplateView):
    """Pick metric versions for a draft: add chosen or all validated, remove chosen."""

    template_name = "metrics_registry/release_edit.html"

    def get(self, request, *args, **kwargs):
        release = self.get_release()
        if release.is_published:
            return published_release_unchangeable(request, release)
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        release = self.get_release()
        items = list(release_items(release))
        included = {item.metric_version_id for item in items}
        available = [
            version
            for version in metric_version_list_current().order_by("metric__key")
            if version.pk not in included
            and version.metric.validation_status != ValidationStatus.RETIRED
        ]
        assembly = release_assembly(contested_kept=self.from_above("contested_kept")())
        left_out = [entry for entry in assembly.left_out if entry.version.pk not in included]
        context.update(
            release=release,
            items=items,
            available=available,
            left_out=left_out,
            changelog=release_changelog(release),
        )
        return context

    def post(self, request, version: str):
        release = self.get_release()
        if release.is_published:
            return published_release_unchangeable(request, release)
        action = request.POST.get("action")
        try:
            if action == "add_validated":
                count = release_assemble_from_current(
                    release, contested_kept=self.from_above("contested_kept")()
                )
                messages.success(
                    request,
                    ngettext(
                        "%(count)s validated metric version added or updated; the ones "
                        "left out are listed below with the reason.",
                        "%(count)s validated metric versions added or updated; the ones "
                        "left out are listed below with the reason.",
                        count,
                    )
                    % {"count": count},
                )
            elif action == "add":
                ids = identifiers_parse(request.POST.getlist("version"), name="version")
                versions = MetricVersion.objects.filter(pk__in=ids).select_related("metric")
                count = release_add_versions(release=release, versions=versions)
                messages.success(
                    request,
                    ngettext(
                        "%(count)s metric version added.", "%(count)s metric versions added.", count
                    )
                    % {"count": count},
                )
            elif action == "remove":
                ids = identifiers_parse(request.POST.getlist("version"), name="version")
                versions = MetricVersion.objects.filter(pk__in=ids)
                count = release_remove_versions(release=release, metrics=versions)
                messages.success(
                    request,
                    ngettext("%(count)s metric removed.", "%(count)s metrics removed.", count)
                    % {"count": count},
                )
            else:
                messages.error(request, _("Choose what to do with the selected versions."))
        except ApplicationError as error:
            messages.error(request, error.message)
        return redirect("metrics_registry:release_edit", version=release.version)


class ReleasePublishView(FromAboveMixin, MaintainerRequiredMixin, ReleaseObjectMixin, TemplateView):
    template_name = "metrics_registry/release_publish.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        release = self.get_release()
        context.update(
            release=release,
            changelog=release_changelog(release),
            item_count=release.items.count(),
        )
        return context

    def post(self, request, version: str):
        release = self.get_release()
        if request.POST.get("confirm") != release.version:
            messages.error(
                request,
                _("Type %(release_version)s to confirm publication.")
                % {"release_version": release.version},
            )
            return redirect("metrics_registry:release_publish", version=release.version)
        try:
            release = release_publish(
                release, published_by=request.user, freezes=self.from_above("release_freezes")
            )
        except ApplicationError as error:
            messages.error(request, error.message)
            return redirect("metrics_registry:release_publish", version=release.version)
        messages.success(
            request,
            _("Release %(release_version)s is published and now immutable.")
            % {"release_version": release.version},
        )
        for warning in release.publish_warnings:
            messages.warning(request, warning)
        return redirect("metrics_registry:release_detail", version=release.version)


# --- Import ------------------------------------------------------------------------------------
