from collections.abc import Callable, Collection, Sequence

from django.urls import URLPattern, path

from . import mapping_views, release_views, text_views, views
from .services.releases import ReleaseDownloads, ReleaseFreeze

app_name = "metrics_registry"

_pages = [
    path("taxonomy/", views.TaxonomyView.as_view(), name="taxonomy"),
    path("metrics/", views.MetricListView.as_view(), name="metric_list"),
    path("metrics/import/", views.MetricImportView.as_view(), name="metric_import"),
    path(
        "metrics/needs-mapping/",
        mapping_views.MetricsNeedingMappingView.as_view(),
        name="metrics_needing_mapping",
    ),
    path("metrics/<str:key>/", views.MetricDetailView.as_view(), name="metric_detail"),
    path(
        "metrics/<str:key>/status/",
        views.MetricStatusChangeView.as_view(),
        name="metric_status_change",
    ),
    path(
        "metrics/<str:key>/v<int:number>/texts/",
        text_views.MetricVersionTextsView.as_view(),
        name="metric_version_texts",
    ),
    path(
        "metrics/<str:key>/v<int:number>/texts/<str:language>/review/",
        text_views.MetricVersionTextReviewView.as_view(),
        name="metric_version_text_review",
    ),
    path(
        "metrics/<str:key>/v<int:number>/texts/<str:language>/reopen/",
        text_views.MetricVersionTextReopenView.as_view(),
        name="metric_version_text_reopen",
    ),
    path("releases/", views.ReleaseListView.as_view(), name="release_list"),
    path("releases/new/", release_views.ReleaseCreateView.as_view(), name="release_create"),
    path(
        "releases/<str:version>/export/<str:fmt>/",
        views.ReleaseExportView.as_view(),
        name="release_export",
    ),
]


def registry_urls(
    *,
    release_downloads: ReleaseDownloads,
    contested_kept: Callable[[], Collection[int]],
    release_freezes: Sequence[ReleaseFreeze],
) -> tuple[list[URLPattern], str]:
    """The registry's pages, for `include`. What its release pages need from the apps above it
    (`metrics_registry.from_above`) is passed in by the site's URL configuration."""
    detail = views.ReleaseDetailView.as_view(release_downloads=release_downloads)
    edit = release_views.ReleaseEditView.as_view(contested_kept=contested_kept)
    publish = release_views.ReleasePublishView.as_view(release_freezes=release_freezes)
    return [
        *_pages,
        path("releases/<str:version>/", detail, name="release_detail"),
        path("releases/<str:version>/edit/", edit, name="release_edit"),
        path("releases/<str:version>/publish/", publish, name="release_publish"),
    ], app_name
