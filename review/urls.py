from django.urls import path

from . import views

app_name = "review"

urlpatterns = [
    path("", views.RaterQueueListView.as_view(), name="rater-queues"),
    path("queues/<int:pk>/rate/", views.RateView.as_view(), name="rate"),
    path("queues/<int:pk>/undo/", views.RatingUndoView.as_view(), name="undo"),
    path("assignments/<int:pk>/submit/", views.AssignmentSubmitView.as_view(), name="submit"),
    path("assignments/<int:pk>/skip/", views.AssignmentSkipView.as_view(), name="skip"),
    path("assignments/<int:pk>/draft/", views.AssignmentDraftView.as_view(), name="draft"),
    path("manage/", views.QueueListView.as_view(), name="queue-list"),
    path("manage/new/", views.QueueCreateView.as_view(), name="queue-create"),
    path("manage/new/run/", views.RunQueueCreateView.as_view(), name="run-queue-create"),
    path("manage/<int:pk>/", views.QueueDetailView.as_view(), name="queue-detail"),
    path("manage/<int:pk>/status/", views.QueueStatusView.as_view(), name="queue-status"),
    path("manage/<int:pk>/ratings.csv", views.QueueExportView.as_view(), name="queue-export"),
    path("priorities/", views.PrioritiesView.as_view(), name="priorities"),
    path("contested/", views.ContestedListView.as_view(), name="contested"),
    path("contested/<int:pk>/keep/", views.ContestedKeepView.as_view(), name="contested-keep"),
]
