from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("", include("core.urls")),
    # Public results (explore, metrics, conversations, label) before the apps' own prefixes.
    path("", include("results.urls")),
    path("registry/", include("metrics_registry.urls")),
    path("submissions/", include("submissions.urls")),
    path("review/", include("review.urls")),
    path("models/", include("llm.urls")),
    path("evaluations/", include("evaluations.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("results.api.urls")),
    path("api/", include("metrics_registry.api.urls")),
    path("api/", include("submissions.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
