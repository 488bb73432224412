from collections.abc import Callable

from django.db.models import QuerySet
from django.urls import URLPattern, path

from . import (
    interop_views,
    rubric_views,
    scenario_views,
    swap_views,
    transcript_views,
    translation_views,
    views,
)

app_name = "evaluations"

urlpatterns = [
    path("scenarios/", scenario_views.ScenarioIndexView.as_view(), name="scenario-index"),
    path(
        "metric-versions/<int:pk>/scenarios/",
        scenario_views.MetricScenarioListView.as_view(),
        name="metric-scenarios",
    ),
    path(
        "metric-versions/<int:pk>/scenarios/generate/",
        scenario_views.ScenarioGenerateView.as_view(),
        name="scenario-generate",
    ),
    path(
        "scenarios/<int:pk>/", scenario_views.ScenarioDetailView.as_view(), name="scenario-detail"
    ),
    path(
        "scenarios/<int:pk>/edit/", scenario_views.ScenarioEditView.as_view(), name="scenario-edit"
    ),
    path(
        "scenarios/<int:pk>/retire/",
        scenario_views.ScenarioRetireView.as_view(),
        name="scenario-retire",
    ),
    path(
        "scenarios/<int:pk>/regenerate/",
        scenario_views.ScenarioRegenerateView.as_view(),
        name="scenario-regenerate",
    ),
    path(
        "scenarios/<int:pk>/translate/",
        translation_views.ScenarioTranslateView.as_view(),
        name="scenario-translate",
    ),
    path(
        "scenarios/<int:pk>/translation-review/",
        translation_views.ScenarioTranslationReviewView.as_view(),
        name="scenario-translation-review",
    ),
    path(
        "releases/<int:pk>/demographics/",
        views.ReleaseDemographicsView.as_view(),
        name="release-demographics",
    ),
    path("runs/", views.RunListView.as_view(), name="run-list"),
    path("runs/new/", views.RunCreateView.as_view(), name="run-create"),
    path(
        "runs/import/",
        transcript_views.TranscriptImportView.as_view(),
        name="transcript-import",
    ),
    path("runs/compare/", views.RunCompareView.as_view(), name="run-compare"),
    path("runs/<int:pk>/", views.RunDetailView.as_view(), name="run-detail"),
    path(
        "runs/<int:run_pk>/conversations/<int:pk>/",
        views.ConversationDetailView.as_view(),
        name="conversation-detail",
    ),
    path("runs/<int:pk>/swap/", swap_views.SwapStudyCreateView.as_view(), name="swap-study-create"),
    path("runs/<int:pk>/official/", views.RunOfficialView.as_view(), name="run-official"),
    path("runs/<int:pk>/<slug:action>/", views.RunActionView.as_view(), name="run-action"),
    path(
        "rubric-regressions/",
        rubric_views.RubricRegressionView.as_view(),
        name="rubric-regressions",
    ),
]


def evaluations_urls(*, held_scenarios: Callable[[], QuerySet]) -> tuple[list[URLPattern], str]:
    """The app's pages, for `include`: the run exports leave out the scenarios that
    `held_scenarios()` names as held back for blind review (the site passes the review app's)."""
    export = interop_views.RunExportView.as_view(held_scenarios=held_scenarios)
    return [
        *urlpatterns,
        path("runs/<int:pk>/export/<str:fmt>/", export, name="run-export"),
    ], app_name
