"""The names of the statistical methods behind a figure's interval, in the reader's language.

`stats` names each method in English and the name is stored with the figure; a page shows it
through `method_words`, which translates the names listed here (gettext_noop marks them for
the catalogue) and leaves any other name, such as one composed for a single figure, as stored.
"""

from django.utils.translation import gettext, gettext_noop

from stats.bounded_means import WILSON_ITEMS
from stats.bounds import CLUSTER_WILSON, NEWCOMBE, WILSON
from stats.differences import PAIRED_DIFFERENCE
from stats.few_clusters import STRATIFIED_WILSON, WILSON_EFFECTIVE
from stats.figures import BOOTSTRAP, CLUSTER_BOOTSTRAP
from stats.judge_trust import AGREEMENT_METHOD, AGREEMENT_METHOD_CLUSTERED, KAPPA_METHOD

# Each key is the stats module's own name; each value the same words, written out so that
# makemessages finds them (tests/results/test_spanish_pages.py checks the two agree).
METHOD_NAMES = {
    WILSON: gettext_noop("Wilson score interval"),
    WILSON_EFFECTIVE: gettext_noop(
        "Wilson score interval on the effective sample size (design effect)"
    ),
    STRATIFIED_WILSON: gettext_noop(
        "Wilson score interval on the effective sample size (design effect per metric from the "
        "run's intra-cluster correlation)"
    ),
    CLUSTER_WILSON: gettext_noop(
        "Wilson score interval on the effective sample size (design effect from the clusters' "
        "intra-cluster correlation, shrunk towards a prior)"
    ),
    WILSON_ITEMS: gettext_noop(
        "Wilson score interval on the number of items (every item scored 0 or 1)"
    ),
    NEWCOMBE: gettext_noop(
        "difference of paired rates, Newcombe's hybrid score interval on effective sizes"
    ),
    PAIRED_DIFFERENCE: gettext_noop(
        "paired difference over shared base scenarios (stratified by metric), Newcombe's hybrid "
        "score interval on effective sizes, simultaneous over all pairs (max-t)"
    ),
    AGREEMENT_METHOD: gettext_noop("Wilson score interval on the effective number of verdicts"),
    AGREEMENT_METHOD_CLUSTERED: gettext_noop(
        "Wilson score interval on the effective number of verdicts (design effect over base "
        "scenarios)"
    ),
    KAPPA_METHOD: gettext_noop(
        "agreement's Wilson interval mapped to kappa at the observed chance agreement"
    ),
    BOOTSTRAP: gettext_noop("percentile bootstrap"),
    CLUSTER_BOOTSTRAP: gettext_noop("cluster bootstrap"),
}


def method_words(method: str | None) -> str:
    """A figure's method (or several, joined by "; ") in the reader's language where known."""
    if not method:
        return method or ""
    return "; ".join(gettext(part) if part in METHOD_NAMES else part for part in method.split("; "))
