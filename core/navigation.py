"""What each role sees in the navigation bar: one list, filtered by the user's roles.

An item with no roles is public. Apps add their pages here as they gain them.
"""

from dataclasses import dataclass
from typing import TypedDict

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from .roles import ROLE_LABELS, AnyUser, Role, user_has_role, user_roles


@dataclass(frozen=True)
class NavItem:
    label: str | Promise  # lazy: translated when a request's language is active
    url_name: str
    roles: tuple[Role, ...] = ()
    icon: str = ""
    # The page reads the reader's teen/adult choice: on the pages that carry one (`reader_age`)
    # the bar's link keeps it.
    keeps_age: bool = False

    def visible_to(self, user: AnyUser) -> bool:
        return not self.roles or user_has_role(user, *self.roles)


PUBLIC_ITEMS: list[NavItem] = [
    NavItem(_("Explore"), "results:explore", icon="pie-chart", keeps_age=True),
    NavItem(_("Metrics"), "results:metric-list", icon="list-check"),
    NavItem(_("Rubrics"), "results:rubrics", icon="ui-checks"),
    NavItem(_("Releases"), "metrics_registry:release_list", icon="tags"),
    NavItem(_("Taxonomy"), "metrics_registry:taxonomy", icon="diagram-3"),
    NavItem(_("Methodology"), "results:methodology", icon="clipboard-data"),
    NavItem(_("API"), "api-docs", icon="braces"),
]

ROLE_ITEMS: list[NavItem] = [
    NavItem(
        _("Metric registry"),
        "metrics_registry:metric_list",
        (Role.RESEARCHER, Role.MAINTAINER),
        "list-check",
    ),
    NavItem(
        _("My submissions"),
        "submissions:list",
        (Role.CONTRIBUTOR, Role.RESEARCHER, Role.MAINTAINER),
        "lightbulb",
    ),
    NavItem(
        _("Metric candidates"),
        "submissions:candidate-list",
        (Role.RESEARCHER, Role.MAINTAINER),
        "clipboard-check",
    ),
    NavItem(
        _("Enquiries"), "submissions:enquiry-list", (Role.RESEARCHER, Role.MAINTAINER), "envelope"
    ),
    NavItem(_("Rating queue"), "review:rater-queues", (Role.EXPERT_REVIEWER,), "ui-checks"),
    NavItem(
        _("Review queues"),
        "review:queue-list",
        (Role.RESEARCHER, Role.MAINTAINER),
        "clipboard-data",
    ),
    NavItem(
        _("Contested metrics"),
        "review:contested",
        (Role.RESEARCHER, Role.MAINTAINER),
        "exclamation-triangle",
    ),
    NavItem(
        _("Scenarios"),
        "evaluations:scenario-index",
        (Role.RESEARCHER, Role.MAINTAINER, Role.EXPERT_REVIEWER),
        "people",
    ),
    NavItem(
        _("Evaluation runs"), "evaluations:run-list", (Role.RESEARCHER, Role.MAINTAINER), "play"
    ),
    NavItem(_("Model configurations"), "llm:configuration-list", (Role.MAINTAINER,), "cpu"),
    NavItem(
        _("Model call log"), "llm:call-list", (Role.MAINTAINER, Role.RESEARCHER), "journal-text"
    ),
    NavItem(
        _("Import metrics"),
        "metrics_registry:metric_import",
        (Role.RESEARCHER, Role.MAINTAINER),
        "upload",
    ),
    NavItem(
        _("Import rubric items"),
        "rubrics:rubric-import",
        (Role.RESEARCHER, Role.MAINTAINER),
        "upload",
    ),
    NavItem(_("Roles"), "core:roles", (Role.MAINTAINER,), "person-badge"),
    NavItem(_("Administration"), "admin:index", (Role.MAINTAINER,), "gear"),
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
            "label": str(item.label),
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
        "roles": sorted(str(ROLE_LABELS[role]) for role in user_roles(user)),
    }
