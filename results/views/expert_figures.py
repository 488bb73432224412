"""A release's expert figures: the staff page (frozen at publication, beside the live ones)
and the public per-metric table of the frozen figures, a page at a time."""

from django.shortcuts import get_object_or_404
from django.views.generic import ListView, TemplateView

from core.pagecache import PublishedPageCacheMixin
from core.roles import Role, RoleRequiredMixin
from metrics_registry.models import Release, ReleaseStatus
from metrics_registry.selectors import release_list

from ..language_pages import ALL, LanguageChoice
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
    release was published (the table behind the methodology page's pooled figures).

    ``?lang=`` shows one language's table, as frozen per language when the rated conversations
    span several; without it the table pools them and says so. A release frozen before the
    per-language tables were kept says it has none for the language chosen."""

    template_name = "results/release_expert_metrics.html"
    context_object_name = "rows"
    paginate_by = 50
    page_cache_params = ("page", "lang")

    def get_queryset(self) -> list[dict]:
        self.release = get_object_or_404(
            Release, version=self.kwargs["version"], status=ReleaseStatus.PUBLISHED
        )
        self.frozen = release_expert_figures_frozen(self.release.pk)
        cells = {c["language"]: c for c in (self.frozen or {}).get("per_language") or []}
        raw = self.request.GET.get("lang")
        self.lang = LanguageChoice(sorted(cells), raw if raw in cells else ALL, items=True)
        figures = self.frozen if self.lang.current == ALL else cells[self.lang.current]
        panel = (figures or {}).get("panel") or {}
        self.kept_per_language = "per_metric" in panel
        return list(panel.get("per_metric") or [])

    def get_context_data(self, **kwargs):
        reader_lang = self.lang.reader_lang
        return super().get_context_data(
            release=self.release,
            frozen=self.frozen,
            lang_choice=self.lang,
            lang_links=self.lang.links({}),
            kept_per_language=self.kept_per_language,
            query=f"lang={reader_lang}" if reader_lang else "",
            **kwargs,
        )
