from django.urls import path

from . import (
    anchor_study,
    expert_figures,
    exports,
    fidelity,
    label_views,
    rubric_exports,
    rubrics,
    swap,
    views,
)

app_name = "results-api"

urlpatterns = [
    path("areas/", views.AreaListApi.as_view(), name="area-list"),
    path("runs/", views.RunListApi.as_view(), name="run-list"),
    path("runs/<int:pk>/", views.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<int:pk>/results/", views.RunResultsApi.as_view(), name="run-results"),
    path("runs/<int:pk>/results.<str:fmt>", exports.RunExportApi.as_view(), name="run-export"),
    path("runs/<int:pk>/judges/", views.RunPanelApi.as_view(), name="run-judges"),
    path(
        "runs/<int:pk>/calibration/",
        label_views.RunCalibrationApi.as_view(),
        name="run-calibration",
    ),
    path("runs/<int:pk>/fidelity/", fidelity.RunFidelityApi.as_view(), name="run-fidelity"),
    path("runs/<int:pk>/swap-studies/", swap.RunSwapStudiesApi.as_view(), name="run-swap-studies"),
    path(
        "runs/<int:pk>/conversations/",
        views.RunConversationListApi.as_view(),
        name="run-conversations",
    ),
    path("runs/<int:pk>/reasks/", anchor_study.RunReasksApi.as_view(), name="run-reasks"),
    path("anchor-study/", anchor_study.AnchorStudyApi.as_view(), name="anchor-study"),
    # Beside the registry's releases/<version>/ (that app serves the release itself).
    path(
        "releases/<str:version>/expert-figures/",
        expert_figures.ReleaseExpertFiguresApi.as_view(),
        name="release-expert-figures",
    ),
    path("conversations/<int:pk>/", views.ConversationDetailApi.as_view(), name="conversation"),
    path("scenarios/<int:pk>/", views.ScenarioDetailApi.as_view(), name="scenario"),
    path("explore/", views.ExploreApi.as_view(), name="explore"),
    path("metrics/<str:key>/results/", views.MetricResultsApi.as_view(), name="metric-results"),
    path("labels/<int:pk>/", label_views.LabelApi.as_view(), name="label"),
    path("rubrics/runs/", rubrics.RubricRunListApi.as_view(), name="rubric-runs"),
    path("rubrics/runs/<int:pk>/", rubrics.RubricRunApi.as_view(), name="rubric-run"),
    path(
        "rubrics/runs/<int:pk>/responses/",
        rubrics.RubricResponseListApi.as_view(),
        name="rubric-responses",
    ),
    path(
        "rubrics/runs/<int:pk>/priorities/",
        rubrics.RubricPrioritiesApi.as_view(),
        name="rubric-priorities",
    ),
    path(
        "rubrics/runs/<int:pk>/results.<str:fmt>",
        rubric_exports.RubricRunExportApi.as_view(),
        name="rubric-export",
    ),
    path(
        "rubrics/responses/<int:pk>/", rubrics.RubricResponseApi.as_view(), name="rubric-response"
    ),
]
