"""Public results pages: thin views over the selectors; they only read published rows."""

from .anchor_study import AnchorStudyView
from .conversations import ConversationView, RunConversationsView
from .explore import ExploreView
from .label import (
    LabelAudienceView,
    LabelCategoryView,
    LabelCompareView,
    LabelOverviewView,
    LabelView,
)
from .label_images import LabelBadgeView, LabelPdfView, LabelPngView, LabelSvgView
from .methodology import MethodologyView
from .metrics import MetricListView, MetricResultsView

__all__ = [
    "AnchorStudyView",
    "ConversationView",
    "ExploreView",
    "LabelAudienceView",
    "LabelBadgeView",
    "LabelCategoryView",
    "LabelCompareView",
    "LabelOverviewView",
    "LabelPdfView",
    "LabelPngView",
    "LabelSvgView",
    "LabelView",
    "MethodologyView",
    "MetricListView",
    "MetricResultsView",
    "RunConversationsView",
]
