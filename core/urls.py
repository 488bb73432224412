from django.urls import path

from . import views

app_name = "core"

urlpatterns = [
    path("dashboard/", views.DashboardView.as_view(), name="dashboard"),
    path("dashboard/languages/", views.ReaderLanguagesView.as_view(), name="languages"),
    path("health/", views.health, name="health"),
    path("health/ready/", views.ready, name="ready"),
    path("roles/", views.RoleAssignmentView.as_view(), name="roles"),
]
