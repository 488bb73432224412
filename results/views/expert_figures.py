"""Staff page: a release's expert figures as frozen at publication, beside the live ones."""

from django.shortcuts import get_object_or_404
from django.views.generic import TemplateView

from core.roles import Role, RoleRequiredMixin
from metrics_registry.models import Release

from ..services.expert_figures import (
    release_expert_figures_frozen,
    release_expert_figures_live,
)


class ReleaseExpertFiguresView(RoleRequiredMixin, TemplateView):
    """Maintainers and researchers compare what the public page cites with today's ratings."""

    required_roles = (Role.RESEARCHER, Role.MAINTAINER)
    template_name = "results/release_expert_figures.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        release = get_object_or_404(Release, version=self.kwargs["version"])
        context.update(
            release=release,
            frozen=release_expert_figures_frozen(release.pk),
            live=release_expert_figures_live(release),
        )
        return context
