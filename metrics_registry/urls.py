from django.urls import path

from . import views

app_name = "metrics_registry"

urlpatterns = [
    path("taxonomy/", views.TaxonomyView.as_view(), name="taxonomy"),
]
