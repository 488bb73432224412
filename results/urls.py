from django.urls import path

from . import views

app_name = "results"

urlpatterns = [
    path("methodology/", views.MethodologyView.as_view(), name="methodology"),
]
