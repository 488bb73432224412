from django.urls import path

from . import views

app_name = "llm"

urlpatterns = [
    path("", views.ConfigurationListView.as_view(), name="configuration-list"),
    path("new/", views.ConfigurationCreateView.as_view(), name="configuration-create"),
    path("<int:pk>/edit/", views.ConfigurationUpdateView.as_view(), name="configuration-update"),
    path("<int:pk>/test/", views.ConfigurationTestView.as_view(), name="configuration-test"),
    path("calls/", views.CallListView.as_view(), name="call-list"),
]
