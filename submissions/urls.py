from django.urls import path, re_path

from . import enquiry_views, views

app_name = "submissions"

urlpatterns = [
    path("", views.SubmissionListView.as_view(), name="list"),
    path("new/", views.SubmissionCreateView.as_view(), name="create"),
    path("<int:pk>/", views.SubmissionDetailView.as_view(), name="detail"),
    path("<int:pk>/edit/", views.SubmissionUpdateView.as_view(), name="edit"),
    path("candidates/", views.CandidateListView.as_view(), name="candidate-list"),
    path("candidates/<int:pk>/", views.CandidateReviewView.as_view(), name="candidate-review"),
    path("enquiries/", enquiry_views.EnquiryListView.as_view(), name="enquiry-list"),
    path("enquiries/<int:pk>/", enquiry_views.EnquiryDetailView.as_view(), name="enquiry-detail"),
    re_path(
        r"^(?P<pk>\d+)/(?P<action>submit|withdraw|retry)/$",
        views.SubmissionActionView.as_view(),
        name="action",
    ),
]
