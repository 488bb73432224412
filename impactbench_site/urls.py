from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core import urls as core_urls
from core import views as core_views
from core.locale_urls import locale_patterns
from evaluations.interop_views import ReleaseInspectExportView
from evaluations.urls import evaluations_urls
from metrics_registry.api.urls import registry_api_urls
from metrics_registry.urls import registry_urls
from results.services.releases import RELEASE_FREEZES, release_downloads
from review.blindness import blind_held_scenarios
from review.services import contested_metric_ids_kept

from .views import HomeView


class FaviconRedirectView(RedirectView):
    permanent = True

    def get_redirect_url(self, *args, **kwargs) -> str:
        return static("favicon.svg")


# Pages people read: at their plain address in the reader's language, and under /es/ (each
# other language's prefix) always in that language (core.locale_urls).
pages = [
    # The home page draws on the apps, so the site serves it; it keeps its name, core:home.
    path(
        "",
        include(
            (
                [path("", HomeView.as_view(), name="home"), *core_urls.urlpatterns],
                core_urls.app_name,
            )
        ),
    ),
    path("", include("demo.urls")),
    # Public results (explore, metrics, conversations, label) before the apps' own prefixes.
    path("", include("results.urls")),
    # Scenarios belong to evaluations; the download sits beside the release's other exports.
    path(
        "registry/releases/<str:version>/export/inspect/",
        ReleaseInspectExportView.as_view(held_scenarios=blind_held_scenarios),
        name="release-export-inspect",
    ),
    # The lower apps' pages that need what apps above them know get it here, from the floor
    # that sees them all, as arguments (docs/layout.md, "How apps tell each other things").
    path(
        "registry/",
        include(
            registry_urls(
                release_downloads=release_downloads,
                contested_kept=contested_metric_ids_kept,
                release_freezes=RELEASE_FREEZES,
            )
        ),
    ),
    path("submissions/", include("submissions.urls")),
    path("contact/", include("submissions.contact_urls")),
    path("review/", include("review.urls")),
    path("models/", include("llm.urls")),
    path("evaluations/", include(evaluations_urls(held_scenarios=blind_held_scenarios))),
    path("evaluations/", include("rubrics.urls")),
    path("accounts/", include("allauth.urls")),
]

urlpatterns = [
    *locale_patterns(*pages),
    # Machines' and operators' addresses have one language-free form.
    path("admin/", admin.site.urls),
    path("api/", include("results.api.urls")),
    path("api/", include(registry_api_urls(release_downloads=release_downloads))),
    path("api/", include("submissions.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script from a URL: no inline script under the CSP.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="core/api_docs.html"
        ),
        name="api-docs",
    ),
    path("i18n/setlang/", core_views.language_set, name="set_language"),
    # Resolved per request: the hashed static name exists only after collectstatic.
    path("favicon.ico", FaviconRedirectView.as_view(), name="favicon"),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
