"""A release's expert figures: the staff page (frozen at publication, beside the live ones)
and the public per-metric table of the frozen figures, a page at a time."""

from django.shortcuts import get_object_or_404
from django.views.generic import ListView, TemplateView

from core.pagecache import PublishedPageCacheMixin
from core.roles import Role, RoleRequiredMixin
from metrics_registry.models import Release, ReleaseStatus
from metrics_registry.selectors import release_list

from ..services.expert_figures import (
    release_expert_figures_frozen,
    release_expert_figures_live,
)


class ReleaseExpertFiguresView(RoleRequiredMixin, TemplateView):
    """Maintainers and researchers compare what the public page cites with today's ratings;
    a draft release is a 404 for everyone but maintainers, as on every other release page."""

    required_roles = (Role.RESEARCHER, Role.MAINTAINER)
    template_name = "results/release_expert_figures.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        release = get_object_or_404(
            release_list(user=self.request.user), version=self.kwargs["version"]
        )
        context.update(
            release=release,
            frozen=release_expert_figures_frozen(release.pk),
            live=release_expert_figures_live(release),
        )
        return context


class ReleaseExpertMetricsView(PublishedPageCacheMixin, ListView):
    """Public: κ, α, majority agreement and examples adequate per metric, as frozen when the
    release was published (the table behind the methodology page's pooled figures)."""

    template_name = "results/release_expert_metrics.html"
    context_object_name = "rows"
    paginate_by = 50
    page_cache_params = ("page",)

    def get_queryset(self) -> list[dict]:
        self.release = get_object_or_404(
            Release, version=self.kwargs["version"], status=ReleaseStatus.PUBLISHED
        )
        self.frozen = release_expert_figures_frozen(self.release.pk)
        panel = (self.frozen or {}).get("panel") or {}
        return list(panel.get("per_metric") or [])

    def get_context_data(self, **kwargs):
        return super().get_context_data(release=self.release, frozen=self.frozen, **kwargs)
