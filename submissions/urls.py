from django.urls import path, re_path

from . import views

app_name = "submissions"

urlpatterns = [
    path("", views.SubmissionListView.as_view(), name="list"),
    path("new/", views.SubmissionCreateView.as_view(), name="create"),
    path("<int:pk>/", views.SubmissionDetailView.as_view(), name="detail"),
    path("<int:pk>/edit/", views.SubmissionUpdateView.as_view(), name="edit"),
    path("candidates/", views.CandidateListView.as_view(), name="candidate-list"),
    path("candidates/<int:pk>/", views.CandidateReviewView.as_view(), name="candidate-review"),
    re_path(
        r"^(?P<pk>\d+)/(?P<action>submit|withdraw|retry)/$",
        views.SubmissionActionView.as_view(),
        name="action",
    ),
]
