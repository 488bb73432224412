from django.urls import path

from . import views

app_name = "core"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("dashboard/", views.DashboardView.as_view(), name="dashboard"),
    path("health/", views.health, name="health"),
    path("health/ready/", views.ready, name="ready"),
    path("demo/progress/", views.demo_progress, name="demo-progress"),
    path("roles/", views.RoleAssignmentView.as_view(), name="roles"),
]
