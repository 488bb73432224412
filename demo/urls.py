from django.urls import path

from . import views

app_name = "demo"

urlpatterns = [
    path("demo/progress/", views.progress, name="progress"),
]
