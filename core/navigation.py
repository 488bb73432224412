"""What each role sees in the navigation bar: one list, filtered by the user's roles.

An item with no roles is public. Apps add their pages here as they gain them.
"""

from dataclasses import dataclass
from typing import TypedDict

from django.urls import reverse

from .roles import AnyUser, Role, user_has_role, user_roles


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str
    roles: tuple[Role, ...] = ()
    icon: str = ""
    # The page reads the reader's teen/adult choice: on the pages that carry one (`reader_age`)
    # the bar's link keeps it.
    keeps_age: bool = False

    def visible_to(self, user: AnyUser) -> bool:
        return not self.roles or user_has_role(user, *self.roles)


PUBLIC_ITEMS: list[NavItem] = [
    NavItem("Explore", "results:explore", icon="pie-chart", keeps_age=True),
    NavItem("Metrics", "results:metric-list", icon="list-check"),
    NavItem("Rubrics", "results:rubrics", icon="ui-checks"),
    NavItem("Releases", "metrics_registry:release_list", icon="tags"),
    NavItem("Taxonomy", "metrics_registry:taxonomy", icon="diagram-3"),
    NavItem("Methodology", "results:methodology", icon="clipboard-data"),
    NavItem("API", "api-docs", icon="braces"),
]

ROLE_ITEMS: list[NavItem] = [
    NavItem(
        "Metric registry",
        "metrics_registry:metric_list",
        (Role.RESEARCHER, Role.MAINTAINER),
        "list-check",
    ),
    NavItem(
        "My submissions",
        "submissions:list",
        (Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER),
        "lightbulb",
    ),
    NavItem(
        "Metric candidates",
        "submissions:candidate-list",
        (Role.RESEARCHER, Role.MAINTAINER),
        "clipboard-check",
    ),
    NavItem(
        "Enquiries", "submissions:enquiry-list", (Role.RESEARCHER, Role.MAINTAINER), "envelope"
    ),
    NavItem("Rating queue", "review:rater-queues", (Role.EXPERT_REVIEWER,), "ui-checks"),
    NavItem(
        "Review queues", "review:queue-list", (Role.RESEARCHER, Role.MAINTAINER), "clipboard-data"
    ),
    NavItem(
        "Contested metrics",
        "review:contested",
        (Role.RESEARCHER, Role.MAINTAINER),
        "exclamation-triangle",
    ),
    NavItem(
        "Scenarios",
        "evaluations:scenario-index",
        (Role.RESEARCHER, Role.MAINTAINER, Role.EXPERT_REVIEWER),
        "people",
    ),
    NavItem("Evaluation runs", "evaluations:run-list", (Role.RESEARCHER, Role.MAINTAINER), "play"),
    NavItem("Model configurations", "llm:configuration-list", (Role.MAINTAINER,), "cpu"),
    NavItem("Model call log", "llm:call-list", (Role.MAINTAINER, Role.RESEARCHER), "journal-text"),
    NavItem(
        "Import metrics",
        "metrics_registry:metric_import",
        (Role.RESEARCHER, Role.MAINTAINER),
        "upload",
    ),
    NavItem(
        "Import rubric items",
        "rubrics:rubric-import",
        (Role.RESEARCHER, Role.MAINTAINER),
        "upload",
    ),
    NavItem("Roles", "core:roles", (Role.MAINTAINER,), "person-badge"),
    NavItem("Administration", "admin:index", (Role.MAINTAINER,), "gear"),
]


class Navigation(TypedDict):
    """The bar's entries (label, url, icon, keeps_age) in its two groups, and the user's role
    names."""

    public: list[dict[str, str | bool]]
    workspace: list[dict[str, str | bool]]
    roles: list[str]


def _entries(items: list[NavItem], user: AnyUser) -> list[dict[str, str | bool]]:
    return [
        {
            "label": item.label,
            "url": reverse(item.url_name),
            "icon": item.icon,
            "keeps_age": item.keeps_age,
        }
        for item in items
        if item.visible_to(user)
    ]


def navigation_for(user: AnyUser) -> Navigation:
    return {
        "public": _entries(PUBLIC_ITEMS, user),
        "workspace": _entries(ROLE_ITEMS, user),
        "roles": sorted(role.value for role in user_roles(user)),
    }
