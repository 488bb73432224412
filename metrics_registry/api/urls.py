from django.urls import path

from . import views

app_name = "registry-api"

urlpatterns = [
    path("metrics/", views.MetricListApi.as_view(), name="metric-list"),
    path("metrics/<str:key>/", views.MetricDetailApi.as_view(), name="metric-detail"),
    path("releases/", views.ReleaseListApi.as_view(), name="release-list"),
    path("releases/<str:version>/", views.ReleaseDetailApi.as_view(), name="release-detail"),
]
