"""A release's frozen expert figures as public pages and the API read them: the release's
answer, each run's validity figures frozen with it (or why they were not), and the link a
release offers to them. Only the frozen row is read, never live ratings."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext, gettext_noop

from metrics_registry.selectors import release_list

from ..selectors import public_runs
from .expert_figures import release_expert_figures_frozen

NOT_FROZEN = (
    "Release {version} was published before expert figures were frozen with each release: "
    "none are published for it."
)


def run_validity_frozen(release_figures: dict[str, Any] | None, run_id: int) -> dict | None:
    """A run's validity figures frozen with its release, read from the release's frozen row
    (no query), or None when none were frozen for it (a draft release, a release frozen before
    runs' figures were, a run added to the release after it was published).

    ``same_as_release``: the run is the only one of its release with blind ratings, so its
    experts' majority against the judge and Cohen's κ are the release table's panel figures,
    which the page then does not print twice.
    """
    runs = (release_figures or {}).get("runs")
    if not runs or str(run_id) not in runs:
        return None
    rated = [key for key, run in runs.items() if run["experts"].get("available")]
    return {
        **runs[str(run_id)],
        "frozen_at": release_figures["frozen_at"],
        "same_as_release": rated == [str(run_id)],
    }


def run_validity_live_reason(release_figures: dict[str, Any] | None, run) -> str:
    """Why a run's validity figures were not frozen (so the page shows them live)."""
    release = run.release
    if release is None:
        return gettext("This run belongs to no release.")
    version = {"version": release.version}
    if not release.is_published:
        return (
            gettext("Release %(version)s is a draft: they are frozen when it is published.")
            % version
        )
    if release_figures is None:
        return (
            gettext("Release %(version)s was published before expert figures were frozen.")
            % version
        )
    if "runs" not in release_figures:
        return (
            gettext("Release %(version)s was published before a run's figures were frozen.")
            % version
        )
    return (
        gettext(
            "The run joined release %(version)s after it was published, so none were frozen for it."
        )
        % version
    )


def release_expert_figures_public(version: str) -> dict[str, Any] | None:
    """What the public API answers for a release's expert figures (three queries): the frozen
    figures, with each public run's own, or ``figures: None`` and the reason. None when no
    published release has this version."""
    release = release_list().filter(version=version).values_list("pk", "published_at").first()
    if release is None:
        return None
    release_id, published_at = release
    frozen = release_expert_figures_frozen(release_id)
    answer = {"release": version, "published_at": published_at}
    if frozen is None:
        return {
            **answer,
            "frozen_at": None,
            "figures": None,
            "reason": NOT_FROZEN.format(version=version),
        }
    # Only runs anyone may read are named: a run kept back (for blind ratings, say) is not.
    public = {
        str(pk) for pk in public_runs().filter(release_id=release_id).values_list("pk", flat=True)
    }
    runs = [{"run": int(pk), **run} for pk, run in frozen.get("runs", {}).items() if pk in public]
    figures = {**frozen, "runs": runs}
    return {**answer, "frozen_at": frozen["frozen_at"], "figures": figures, "reason": ""}


def release_expert_figures_download(*, release) -> list[dict[str, str]]:
    """The release page's and release API's link to its frozen expert figures (no query)."""
    if not release.is_published:
        return []
    return [
        {
            # Kept in English (the API's words); the release page translates it.
            "label": gettext_noop("Expert figures (frozen at publication)"),
            "url": reverse("results-api:release-expert-figures", args=[release.version]),
            "format": "json",
        }
    ]
