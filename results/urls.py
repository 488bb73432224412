from django.urls import path

from . import views
from .views import rubrics as rubric_views
from .views.expert_figures import ReleaseExpertFiguresView, ReleaseExpertMetricsView

app_name = "results"

urlpatterns = [
    path("results/methodology/", views.MethodologyView.as_view(), name="methodology"),
    path("results/methodology/anchors/", views.AnchorStudyView.as_view(), name="anchor-study"),
    path("results/rubrics/", rubric_views.RubricResultsView.as_view(), name="rubrics"),
    path("results/rubrics/items/", rubric_views.RubricItemsView.as_view(), name="rubric-items"),
    path(
        "results/rubrics/replies/<int:pk>/",
        rubric_views.RubricResponseView.as_view(),
        name="rubric-response",
    ),
    path(
        "results/rubrics/priorities/",
        rubric_views.RubricPrioritiesView.as_view(),
        name="rubric-priorities",
    ),
    path("explore/", views.ExploreView.as_view(), name="explore"),
    path("metrics/", views.MetricListView.as_view(), name="metric-list"),
    path("metrics/<str:key>/", views.MetricResultsView.as_view(), name="metric"),
    path("conversations/<int:pk>/", views.ConversationView.as_view(), name="conversation"),
    path("label/", views.LabelOverviewView.as_view(), name="label-overview"),
    path("label/compare/", views.LabelCompareView.as_view(), name="label-compare"),
    path("label/<int:pk>/", views.LabelView.as_view(), name="label"),
    path(
        "label/<int:pk>/category/<slug:slug>/",
        views.LabelCategoryView.as_view(),
        name="label-category",
    ),
    path(
        "label/<int:pk>/for/<slug:audience>/",
        views.LabelAudienceView.as_view(),
        name="label-audience",
    ),
    path("label/<int:pk>/label.svg", views.LabelSvgView.as_view(), name="label-svg"),
    path("label/<int:pk>/label.png", views.LabelPngView.as_view(), name="label-png"),
    path("label/<int:pk>/label.pdf", views.LabelPdfView.as_view(), name="label-pdf"),
    path("label/<int:pk>/badge.svg", views.LabelBadgeView.as_view(), name="label-badge"),
    path(
        "evaluations/runs/<int:pk>/conversations/",
        views.RunConversationsView.as_view(),
        name="run-conversations",
    ),
    path(
        "results/releases/<str:version>/expert-figures/",
        ReleaseExpertFiguresView.as_view(),
        name="release-expert-figures",
    ),
    path(
        "results/releases/<str:version>/expert-figures/metrics/",
        ReleaseExpertMetricsView.as_view(),
        name="release-expert-metrics",
    ),
]
