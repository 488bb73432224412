from django.urls import path

from .enquiry_views import ContactView

app_name = "contact"

urlpatterns = [path("", ContactView.as_view(), name="form")]
