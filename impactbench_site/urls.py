from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core import urls as core_urls
from evaluations.interop_views import ReleaseInspectExportView

from .views import HomeView


class FaviconRedirectView(RedirectView):
    permanent = True

    def get_redirect_url(self, *args, **kwargs) -> str:
        return static("favicon.svg")


urlpatterns = [
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
        ReleaseInspectExportView.as_view(),
        name="release-export-inspect",
    ),
    path("registry/", include("metrics_registry.urls")),
    path("submissions/", include("submissions.urls")),
    path("contact/", include("submissions.contact_urls")),
    path("review/", include("review.urls")),
    path("models/", include("llm.urls")),
    path("evaluations/", include("evaluations.urls")),
    path("evaluations/", include("rubrics.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("results.api.urls")),
    path("api/", include("metrics_registry.api.urls")),
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
    # Resolved per request: the hashed static name exists only after collectstatic.
    path("favicon.ico", FaviconRedirectView.as_view(), name="favicon"),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
