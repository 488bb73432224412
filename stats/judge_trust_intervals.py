"""The intervals of judge-expert agreement that keep positive width at a cell's few verdicts.

A metric x model cell holds about six blind verdicts from three base scenarios: a cluster
bootstrap there gives "1.000 [1.000, 1.000]" whenever judge and experts agree throughout. The
agreement's interval is instead Wilson's score interval on the effective number of verdicts
(``n`` over the design effect of the base scenarios, the intra-cluster correlation of the
cell shrunk towards the release's), and kappa's holds that interval mapped to kappa at the
observed chance agreement (:func:`.bounds.coefficient_image`, as every coefficient's).
Vectorised over cells; pure NumPy.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .few_clusters import (
    design_effect,
    effective_wilson,
    intra_cluster_correlation,
    shrunk_correlation,
)

# A cell's own intra-cluster correlation rests on three base scenarios: it counts as this many
# clusters' worth of evidence against the release's (pooled over every cell), so one cell's
# luck barely moves its design effect while a cell with many scenarios keeps mostly its own.
ICC_PRIOR_CLUSTERS = 20.0


def agreement_icc(
    groups: Sequence[Hashable] | NDArray[Any],
    judge: ArrayLike,
    expert: ArrayLike,
    clusters: ArrayLike,
) -> float:
    """The intra-cluster correlation of judge-expert agreement, pooled over the groups (a
    release's metric x model cells) by one-way ANOVA over their base scenarios
    (:func:`.few_clusters.intra_cluster_correlation`): hundreds of cells make it stable where
    one cell's three scenarios could not."""
    j, e = np.asarray(judge, dtype=np.float64), np.asarray(expert, dtype=np.float64)
    both = np.isfinite(j) & np.isfinite(e)
    if not both.any():
        return 0.0
    group = np.unique(np.asarray(groups, dtype=object).astype(str)[both], return_inverse=True)[1]
    cluster = np.unique(np.asarray(clusters).astype(str)[both], return_inverse=True)[1]
    # A cluster within its group: the same base scenario rated for two models is two clusters.
    pair = np.unique(
        group.ravel() * (int(cluster.max()) + 1) + cluster.ravel(), return_inverse=True
    )[1]
    pair = pair.ravel()
    agreed = np.bincount(pair, weights=(j[both] == e[both]).astype(np.float64))
    rated = np.bincount(pair).astype(np.float64)
    group_of = np.zeros(rated.size, dtype=np.int64)
    group_of[pair] = group.ravel()
    return intra_cluster_correlation(group_of, agreed, rated)


def shrunk_icc(own: ArrayLike, n_clusters: ArrayLike, release: float) -> NDArray[np.float64]:
    """Each cell's own intra-cluster correlation shrunk towards the release's
    (:func:`.few_clusters.shrunk_correlation`): weight ``(G - 1) / (G - 1 +
    ICC_PRIOR_CLUSTERS)`` on its own (none with one cluster)."""
    g = np.asarray(n_clusters, dtype=np.float64)
    return shrunk_correlation(
        own, g - 1.0, np.ones(g.shape, bool), release, prior_clusters=ICC_PRIOR_CLUSTERS
    )


def effective_agreement_interval(
    agreed: ArrayLike,
    n: ArrayLike,
    n_clusters: ArrayLike,
    icc: ArrayLike,
    confidence: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score interval of ``agreed / n`` on the effective number of verdicts
    ``n / deff``, ``deff = 1 + (n / G - 1) icc`` (vectorised over cells). Positive width
    inside [0, 1] holding the point for every n >= 1, all or none agreeing included."""
    m = np.asarray(n, dtype=np.float64)
    g = np.maximum(np.asarray(n_clusters, dtype=np.float64), 1.0)
    deff = np.vectorize(design_effect, otypes=[np.float64])(icc, m / g)
    return effective_wilson(agreed, m, deff, confidence)


def chance_agreement(confusion: ArrayLike) -> NDArray[np.float64]:
    """Chance agreement ``sum_k row_k col_k / n^2`` of rows of flattened 2 x 2 tables."""
    t = np.asarray(confusion, dtype=np.float64).reshape(-1, 2, 2)
    n = t.sum(axis=(1, 2))
    with np.errstate(all="ignore"):
        return (t.sum(axis=2) * t.sum(axis=1)).sum(axis=1) / (n * n)
