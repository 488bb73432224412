from django.urls import path

from . import mapping_views, views

app_name = "metrics_registry"

urlpatterns = [
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
    path("releases/", views.ReleaseListView.as_view(), name="release_list"),
    path("releases/new/", views.ReleaseCreateView.as_view(), name="release_create"),
    path("releases/<str:version>/", views.ReleaseDetailView.as_view(), name="release_detail"),
    path("releases/<str:version>/edit/", views.ReleaseEditView.as_view(), name="release_edit"),
    path(
        "releases/<str:version>/publish/",
        views.ReleasePublishView.as_view(),
        name="release_publish",
    ),
    path(
        "releases/<str:version>/export/<str:fmt>/",
        views.ReleaseExportView.as_view(),
        name="release_export",
    ),
]
