from django.urls import path

from . import views

app_name = "submissions-api"

urlpatterns = [
    path("submissions/", views.SubmissionListApi.as_view(), name="submission-list"),
    path("submissions/<int:pk>/", views.SubmissionDetailApi.as_view(), name="submission-detail"),
]
