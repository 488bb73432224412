"""The names of the statistical methods behind a figure's interval, in the reader's language.

`stats` names each method in English and the name is stored with the figure; a page shows it
through `method_words`, which translates the names listed here (gettext_noop marks them for
the catalogue). A name `stats` composes ("cluster bootstrap over base scenarios", a hull around
another method, a reflected interval) is recognised by its parts and translated as one whole
phrase with the parts in it; any other name is shown as stored.
"""

import re

from django.utils.translation import gettext, gettext_noop

from rubrics.scoring import AGGREGATE_METHOD
from stats.bounded_means import WILSON_ITEMS
from stats.bounds import CLUSTER_WILSON, COEFFICIENT_HULL, NEWCOMBE, RANK_HULL, WILSON
from stats.differences import PAIRED_DIFFERENCE
from stats.few_clusters import STRATIFIED_WILSON, WILSON_EFFECTIVE
from stats.figures import BOOTSTRAP, CLUSTER_BOOTSTRAP
from stats.judge_trust import (
    AGREEMENT_METHOD,
    AGREEMENT_METHOD_CLUSTERED,
    KAPPA_METHOD,
    KAPPA_METHOD_RESAMPLED,
)
from stats.ranking import BRADLEY_TERRY_BOOTSTRAP
from stats.swap import REFLECTED

# Each key is the stats module's own name; each value the same words, written out so that
# makemessages finds them (tests/results/test_spanish_pages.py checks the two agree).
_AGGREGATE_MEAN, _AGGREGATE_INTERVAL = AGGREGATE_METHOD.split("; ")

METHOD_NAMES = {
    # rubrics.scoring's aggregate names two methods, read apart like any "; "-joined name.
    _AGGREGATE_MEAN: gettext_noop("mean of item scores clipped to [0, 1] (HealthBench)"),
    _AGGREGATE_INTERVAL: gettext_noop(
        "interval: hull of the t interval over items (G - 1 degrees of freedom, clamped to "
        "[0, 1]) and the Wilson interval on the number of items"
    ),
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
    BRADLEY_TERRY_BOOTSTRAP: gettext_noop("cluster bootstrap over rated items (percentile)"),
}

# What a resampled or effective-size method runs over (the `over` of `stats.figures`).
OVER_WORDS = {
    "base scenarios": gettext_noop("base scenarios"),
    "replies": gettext_noop("replies"),
    "items": gettext_noop("items"),
    "rated items": gettext_noop("rated items"),
    "pairs": gettext_noop("pairs"),
    "metrics": gettext_noop("metrics"),
    "scenarios": gettext_noop("scenarios"),
    "conversations": gettext_noop("conversations"),
}

# "<method> over <what>" as `stats` composes it, each translated as one phrase.
_OVER_PHRASES = {
    CLUSTER_BOOTSTRAP: gettext_noop("cluster bootstrap over %(over)s"),
    CLUSTER_WILSON: gettext_noop(
        "Wilson score interval on the effective sample size (design effect from the clusters' "
        "intra-cluster correlation, shrunk towards a prior) over %(over)s"
    ),
    NEWCOMBE: gettext_noop(
        "difference of paired rates, Newcombe's hybrid score interval on effective sizes, over "
        "%(over)s"
    ),
}
# A hull around another method: "<hull> (<method>)".
_HULL_PHRASES = {
    COEFFICIENT_HULL: gettext_noop(
        "hull of the percentile bootstrap and the Wilson interval of the observed agreement on "
        "the effective sample size, at the observed chance agreement (%(method)s)"
    ),
    RANK_HULL: gettext_noop(
        "hull of the percentile bootstrap and the Wilson interval of the concordance share on "
        "the ranked items (%(method)s)"
    ),
}
_REFLECTED_PHRASE = gettext_noop(
    "%(method)s, hulled with its reflection about the value (basic bootstrap)"
)
_KAPPA_RESAMPLED = re.compile(
    "^" + re.escape(KAPPA_METHOD_RESAMPLED).replace(re.escape("{over}"), "(.+)") + "$"
)
_KAPPA_RESAMPLED_PHRASE = gettext_noop(
    "percentile bootstrap over %(over)s, widened to the agreement's Wilson interval mapped to "
    "kappa at the observed chance agreement"
)


def _over_words(over: str) -> str | None:
    return gettext(OVER_WORDS[over]) if over in OVER_WORDS else None


def _one_method(name: str) -> str:
    """One method's name in the reader's language: a listed name, a composed one rebuilt whole
    from its translated parts, or as stored."""
    if name in METHOD_NAMES:
        return gettext(name)
    for head, phrase in _OVER_PHRASES.items():
        over = _over_words(name.removeprefix(f"{head} over ")) if name.startswith(head) else None
        if over is not None:
            return gettext(phrase) % {"over": over}
    for hull, phrase in _HULL_PHRASES.items():
        if name.startswith(f"{hull} (") and name.endswith(")"):
            return gettext(phrase) % {"method": _one_method(name[len(hull) + 2 : -1])}
    if name.endswith(f", {REFLECTED}"):
        return gettext(_REFLECTED_PHRASE) % {"method": _one_method(name[: -len(REFLECTED) - 2])}
    match = _KAPPA_RESAMPLED.match(name)
    if match and (over := _over_words(match[1])) is not None:
        return gettext(_KAPPA_RESAMPLED_PHRASE) % {"over": over}
    return name


def method_words(method: str | None) -> str:
    """A figure's method (or several, joined by "; ") in the reader's language where known."""
    if not method:
        return method or ""
    return "; ".join(_one_method(part) for part in method.split("; "))
